"""Migration 0012 gives every belief table its search column and index — the live one, and a
generation's built before the migration existed (one built after copies them with LIKE)."""

from __future__ import annotations

from pathlib import Path

import asyncpg
import pytest

from engram.generations import schema as generation_schema
from engram.generations.registry import register_generation
from engram.generations.schema import GENERATION_TABLES, create_generation_schema
from engram.projections.migrate import migrate
from tests.support.migrations import copy_migrations

pytestmark = pytest.mark.integration

_HAS_SEARCH = """
SELECT count(*) FROM information_schema.columns
WHERE table_schema = $1 AND table_name = 'belief' AND column_name = 'search_vector'
"""


_PUBLIC_TABLES = "SELECT tablename FROM pg_tables WHERE schemaname = 'public'"


async def test_a_generation_built_before_the_migration_gets_the_column_and_index(
    unmigrated: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    before = tmp_path / "migrations"
    copy_migrations(before, below=12)  # not the search migration nor any after it
    conn = await asyncpg.connect(unmigrated)
    try:
        await migrate(conn, before)
        # The generation as the code of that time built it: the tables that existed then.
        then = {r["tablename"] for r in await conn.fetch(_PUBLIC_TABLES)}
        monkeypatch.setattr(
            generation_schema, "GENERATION_TABLES", tuple(t for t in GENERATION_TABLES if t in then)
        )
        generation = await register_generation(conn, policy_version="v", policy_yaml="")
        await create_generation_schema(conn, generation.schema_name)
        assert await conn.fetchval(_HAS_SEARCH, generation.schema_name) == 0

        applied = await migrate(conn)
        assert applied[0].name == "belief_search"
        for schema in ("public", generation.schema_name):
            assert await conn.fetchval(_HAS_SEARCH, schema) == 1, schema
            assert await conn.fetchval(
                "SELECT count(*) FROM pg_indexes WHERE schemaname = $1 AND indexname = $2",
                schema,
                "belief_search",
            )
    finally:
        await conn.close()


_EXPRESSION = """
SELECT pg_get_expr(d.adbin, d.adrelid) FROM pg_attrdef d
JOIN pg_attribute a ON a.attrelid = d.adrelid AND a.attnum = d.adnum
WHERE d.adrelid = format('%I.belief', $1::text)::regclass AND a.attname = 'search_vector'
"""


async def test_every_generation_searches_accent_insensitively_like_the_live_tables(
    unmigrated: str, tmp_path: Path
) -> None:
    """Migration 0020: a generation built before it is rebuilt with ``engram_english``; one
    built after copies the column; both search as the live table does."""
    before = tmp_path / "migrations"
    copy_migrations(before, below=20)
    conn = await asyncpg.connect(unmigrated)
    try:
        await migrate(conn, before)
        old = await register_generation(conn, policy_version="v1", policy_yaml="")
        then = {r["tablename"] for r in await conn.fetch(_PUBLIC_TABLES)}
        with pytest.MonkeyPatch.context() as patch:  # the tables a generation had then
            patch.setattr(
                generation_schema,
                "GENERATION_TABLES",
                tuple(t for t in GENERATION_TABLES if t in then),
            )
            await create_generation_schema(conn, old.schema_name)
        assert "'english'" in await conn.fetchval(_EXPRESSION, old.schema_name)

        applied = await migrate(conn)
        assert applied[0].name == "search_unaccent"
        new = await register_generation(conn, policy_version="v2", policy_yaml="")
        await create_generation_schema(conn, new.schema_name)
        live = await conn.fetchval(_EXPRESSION, "public")
        assert "engram_english" in live
        for schema in (old.schema_name, new.schema_name):
            assert await conn.fetchval(_EXPRESSION, schema) == live, schema
            assert await conn.fetchval(  # LIKE names its copy of the index after the column
                "SELECT count(*) FROM pg_indexes WHERE schemaname = $1 AND tablename = 'belief' "
                "AND indexdef LIKE '%USING gin (search_vector)%'",
                schema,
            )
        assert await conn.fetchval(
            "SELECT to_tsvector('engram_english', 'Café Lumière')"
            " @@ plainto_tsquery('engram_english', 'cafe lumiere')"
        )
    finally:
        await conn.close()
