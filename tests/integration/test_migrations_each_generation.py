"""A migration marked ``-- engram: each generation`` runs in public and in every generation
schema; a generation built before such migrations ends shaped like one built after them; a
rewrite that names the checksum it replaces is accepted where that text was applied."""

from __future__ import annotations

import hashlib
import re
from pathlib import Path

import asyncpg
import pytest

from engram.projections.migrate import EACH_GENERATION, MigrationError, discover, migrate
from tests.support.migrations import copy_migrations, create_generation_as_of_now

pytestmark = pytest.mark.integration

_MARK = f"""{EACH_GENERATION}
CREATE TABLE marker (schema_name text NOT NULL DEFAULT current_schema());
INSERT INTO marker DEFAULT VALUES;
"""


async def test_the_body_runs_in_public_and_each_generation_not_a_dropped_one(
    fresh_database: str, tmp_path: Path
) -> None:
    folder = copy_migrations(tmp_path / "migrations")
    newest = discover()[-1].version
    (folder / f"{newest + 1:04d}_marker.sql").write_text(_MARK, encoding="utf-8")
    conn = await asyncpg.connect(fresh_database)
    try:
        first = await create_generation_as_of_now(conn, "g1")
        second = await create_generation_as_of_now(conn, "g2")
        await conn.execute(
            "INSERT INTO generation (generation_id, schema_name, policy_version, status) "
            "VALUES ('gone', 'gen_gone', 'v', 'dropped')"
        )
        await conn.execute("CREATE SCHEMA gen_gone")
        search_path = await conn.fetchval("SHOW search_path")

        assert [m.name for m in await migrate(conn, folder)] == ["marker"]

        for schema in ("public", first, second):
            assert await conn.fetchval(f"SELECT array_agg(schema_name) FROM {schema}.marker") == [
                schema
            ]
        assert await conn.fetchval("SELECT to_regclass('gen_gone.marker')") is None
        assert await conn.fetchval("SHOW search_path") == search_path
        assert await conn.fetchval(
            "SELECT count(*) FROM schema_migrations WHERE version = $1", newest + 1
        )
    finally:
        await conn.close()


async def test_a_table_a_generation_lacks_fails_the_migration_instead_of_public_twice(
    fresh_database: str, tmp_path: Path
) -> None:
    """The search path is the generation alone: an unqualified name it lacks is an error, and
    the whole migration (public's part too) rolls back."""
    folder = copy_migrations(tmp_path / "migrations")
    newest = discover()[-1].version
    (folder / f"{newest + 1:04d}_vocabulary_index.sql").write_text(
        f"{EACH_GENERATION}\nCREATE INDEX relation_by_kind ON relation (object_kind);\n",
        encoding="utf-8",
    )
    conn = await asyncpg.connect(fresh_database)
    try:
        await create_generation_as_of_now(conn, "g1")
        with pytest.raises(asyncpg.UndefinedTableError):
            await migrate(conn, folder)
        assert await conn.fetchval("SELECT to_regclass('public.relation_by_kind')") is None
    finally:
        await conn.close()


async def test_a_rewrite_naming_the_applied_checksum_is_accepted_any_other_edit_is_not(
    fresh_database: str, tmp_path: Path
) -> None:
    folder = copy_migrations(tmp_path / "migrations")
    newest = discover()[-1].version
    path = folder / f"{newest + 1:04d}_note.sql"
    applied = "COMMENT ON TABLE relation IS 'the closed vocabulary';\n"
    path.write_text(applied, encoding="utf-8")
    conn = await asyncpg.connect(fresh_database)
    try:
        assert [m.name for m in await migrate(conn, folder)] == ["note"]
        checksum = hashlib.sha256(applied.encode()).hexdigest()
        path.write_text(
            f"-- engram: replaces sha256 {checksum}\n"
            "COMMENT ON TABLE relation IS 'the closed vocabulary';  -- the same, said again\n",
            encoding="utf-8",
        )
        assert await migrate(conn, folder) == []
        path.write_text("COMMENT ON TABLE relation IS 'something else';\n", encoding="utf-8")
        with pytest.raises(MigrationError, match="was edited after it was applied"):
            await migrate(conn, folder)
    finally:
        await conn.close()


# A column's place among the live ones, not its attnum: a column dropped and added again (0020's
# search_vector) leaves a dropped slot behind, which shifts the attnum of none that a query sees.
_COLUMNS = """
SELECT c.relname, row_number() OVER (PARTITION BY c.relname ORDER BY a.attnum), a.attname, format_type(a.atttypid, a.atttypmod), a.attnotnull,
       a.attgenerated, a.attcompression, pg_get_expr(d.adbin, d.adrelid)
FROM pg_attribute a
JOIN pg_class c ON c.oid = a.attrelid
LEFT JOIN pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum
WHERE c.relnamespace = $1::regnamespace AND c.relkind = 'r' AND a.attnum > 0
  AND NOT a.attisdropped
"""
_CONSTRAINTS = """
SELECT c.relname, k.contype, pg_get_constraintdef(k.oid)
FROM pg_constraint k JOIN pg_class c ON c.oid = k.conrelid
WHERE c.relnamespace = $1::regnamespace
"""
_INDEXES = "SELECT tablename, indexdef, indexname FROM pg_indexes WHERE schemaname = $1"


async def _shape(conn: asyncpg.Connection, schema: str) -> dict[str, list[tuple[object, ...]]]:
    """A schema's tables as definitions, its own name and the names PostgreSQL generates (an
    index or key copied by LIKE is named after its columns) left out."""

    def plain(value: object) -> object:
        return value.replace(f"{schema}.", "S.") if isinstance(value, str) else value

    indexes = []
    for table, definition, name in await conn.fetch(_INDEXES, schema):
        unnamed = re.sub(
            rf"^CREATE (UNIQUE )?INDEX {re.escape(name)} ", r"CREATE \1INDEX ", definition
        )
        indexes.append((table, plain(unnamed)))
    return {
        "columns": sorted(tuple(plain(v) for v in r) for r in await conn.fetch(_COLUMNS, schema)),
        "constraints": sorted(tuple(r) for r in await conn.fetch(_CONSTRAINTS, schema)),
        "indexes": sorted(indexes),
    }


_LEFT_BY_0016 = ("evidence", "CREATE INDEX ON S.evidence USING btree (belief_id)")
"""0016 drops ``evidence_belief`` by that name, but LIKE named a generation's copy
``evidence_belief_id_idx``: a generation built before 0016 keeps the redundant index (the old
PL/pgSQL loop did the same). Dropping it takes a new migration; until then it is the one
expected difference."""


async def test_a_generation_built_before_the_per_generation_migrations_ends_like_a_new_one(
    unmigrated: str, tmp_path: Path
) -> None:
    """The first per-generation migration is 0011: a generation built at 0010 goes through every
    one of them; one built at the newest version copies the tables as they are."""
    conn = await asyncpg.connect(unmigrated)
    try:
        await migrate(conn, copy_migrations(tmp_path / "before", below=11))
        early = await create_generation_as_of_now(conn, "early")
        await migrate(conn)
        late = await create_generation_as_of_now(conn, "late")
        shape = await _shape(conn, early)
        shape["indexes"].remove(_LEFT_BY_0016)
        assert shape == await _shape(conn, late)
    finally:
        await conn.close()
