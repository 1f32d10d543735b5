"""Numbered SQL migrations, applied in order and recorded with a checksum.

A file that was applied and edited afterwards is refused: the database was built from the old
text, so silently accepting the new one would leave code and schema disagreeing. The one
exception is a rewrite that builds the same schema, which names the checksum of the text it
replaces (``-- engram: replaces sha256 <hex>``); migrations/README.md says when that is allowed.

A migration whose first line is ``-- engram: each generation`` is written once, as plain DDL on
unqualified names, and run in ``public`` and then in every generation schema (``search_path``
set to that schema alone), in the same transaction: each generation schema holds its own copy
of the per-generation tables, and one built before the migration must change with the live one.

Numbers rise but may skip: work done in parallel is given numbers ahead of time, and a number
that was not needed stays unused. What must hold is the order: a migration numbered below one
the database already has is refused rather than applied out of order.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from importlib import resources
from importlib.resources.abc import Traversable

import asyncpg
import structlog

from engram.infra.errors import EngramFailure

log = structlog.get_logger(__name__)

MIGRATIONS_DIR: Traversable = resources.files("engram.migrations")
"""The numbered SQL files, package data of ``migrations``: found the same way in a checkout and
in an installed wheel."""
_NAME = re.compile(r"^(\d{4})_([a-z0-9_]+)\.sql$")
_LOCK_KEY = 0x656E6772616D  # "engram": one migrator at a time
EACH_GENERATION = "-- engram: each generation"
"""First line of a migration run in ``public`` and then in every generation schema."""
_REPLACES = re.compile(r"^-- engram: replaces sha256 ([0-9a-f]{64})$", re.MULTILINE)

_GENERATION_SCHEMAS = """
SELECT g.schema_name FROM generation g
JOIN pg_namespace n ON n.nspname = g.schema_name
WHERE g.status <> 'dropped' AND g.schema_name <> 'public'
ORDER BY g.schema_name
"""
"""The schemas a per-generation migration runs in after ``public``: a dropped generation's
schema is gone or going, and ``public`` is the first generation's own."""

_CREATE_TABLE = """
CREATE TABLE IF NOT EXISTS schema_migrations (
    version    integer PRIMARY KEY,
    name       text NOT NULL,
    checksum   text NOT NULL,
    applied_at timestamptz NOT NULL DEFAULT now()
)"""


class MigrationError(EngramFailure, RuntimeError):
    """A migration folder or database that cannot be brought up to date safely."""

    code = "migration_refused"


@dataclass(frozen=True)
class Migration:
    version: int
    name: str
    sql: str

    @property
    def checksum(self) -> str:
        return hashlib.sha256(self.sql.encode()).hexdigest()

    @property
    def each_generation(self) -> bool:
        """Whether the body runs in ``public`` and then in every generation schema."""
        return self.sql.split("\n", 1)[0].strip() == EACH_GENERATION

    @property
    def replaces(self) -> frozenset[str]:
        """Checksums of earlier texts of this migration that built the same schema: a database
        that applied one of them has applied this one."""
        return frozenset(_REPLACES.findall(self.sql))

    def matches(self, applied_checksum: str) -> bool:
        return applied_checksum == self.checksum or applied_checksum in self.replaces


def discover(directory: Traversable = MIGRATIONS_DIR) -> list[Migration]:
    """Every ``NNNN_name.sql`` file, in order; a duplicate number is an error."""
    migrations = []
    for path in sorted(
        (entry for entry in directory.iterdir() if entry.name.endswith(".sql")),
        key=lambda entry: entry.name,
    ):
        match = _NAME.match(path.name)
        if match is None:
            raise MigrationError(f"{path}: migration files are named NNNN_lower_snake.sql")
        migrations.append(Migration(int(match[1]), match[2], path.read_text(encoding="utf-8")))
    versions = [m.version for m in migrations]
    if len(set(versions)) != len(versions) or any(v < 1 for v in versions):
        raise MigrationError(
            f"{directory}: migration numbers must be unique and start at 1: {versions}"
        )
    return migrations


async def migrate(
    conn: asyncpg.Connection, directory: Traversable = MIGRATIONS_DIR
) -> list[Migration]:
    """Apply what is missing, each file in its own transaction; return what was applied."""
    migrations = discover(directory)
    await conn.execute("SELECT pg_advisory_lock($1)", _LOCK_KEY)
    try:
        await conn.execute(_CREATE_TABLE)
        applied = {
            row["version"]: row
            for row in await conn.fetch("SELECT version, name, checksum FROM schema_migrations")
        }
        _check_applied_unchanged(migrations, applied)
        pending = [m for m in migrations if m.version not in applied]
        _check_in_order(pending, applied)
        for migration in pending:
            async with conn.transaction():
                await _apply(conn, migration)
                await conn.execute(
                    "INSERT INTO schema_migrations (version, name, checksum) VALUES ($1, $2, $3)",
                    migration.version,
                    migration.name,
                    migration.checksum,
                )
            log.info("migration.applied", version=migration.version, name=migration.name)
        return pending
    finally:
        await conn.execute("SELECT pg_advisory_unlock($1)", _LOCK_KEY)


async def _apply(conn: asyncpg.Connection, migration: Migration) -> None:
    """Run ``migration`` inside the caller's transaction: once, or once per schema."""
    if not migration.each_generation:
        await conn.execute(migration.sql)
        return
    schemas = ["public"]
    if await conn.fetchval("SELECT to_regclass('public.generation')") is not None:
        schemas += [row["schema_name"] for row in await conn.fetch(_GENERATION_SCHEMAS)]
    search_path = await conn.fetchval("SELECT current_setting('search_path')")
    for schema in schemas:
        # The schema alone, so a table that a generation lacks is an error rather than the live
        # table changed a second time. Local to the transaction, and put back before the
        # migration is recorded.
        await conn.execute("SELECT set_config('search_path', quote_ident($1), true)", schema)
        await conn.execute(migration.sql)
        log.info("migration.schema", version=migration.version, name=migration.name, schema=schema)
    await conn.execute("SELECT set_config('search_path', $1, true)", search_path)


def _check_in_order(pending: list[Migration], applied: dict[int, asyncpg.Record]) -> None:
    """A pending migration must come after every applied one: a schema is built in one order."""
    newest = max(applied, default=0)
    behind = [f"{m.version:04d}_{m.name}" for m in pending if m.version < newest]
    if behind:
        raise MigrationError(
            f"{', '.join(behind)} would be applied after {newest:04d}, which the database already "
            "has; renumber the new migration above the newest applied one"
        )


def _check_applied_unchanged(
    migrations: list[Migration], applied: dict[int, asyncpg.Record]
) -> None:
    known = {m.version: m for m in migrations}
    for version, row in sorted(applied.items()):
        migration = known.get(version)
        if migration is None:
            raise MigrationError(
                f"the database has migration {version:04d}_{row['name']} which is not in "
                f"{MIGRATIONS_DIR}; this code is older than the database"
            )
        if not migration.matches(row["checksum"]):
            raise MigrationError(
                f"migration {version:04d}_{migration.name}.sql was edited after it was applied "
                f"(checksum {row['checksum'][:12]} in the database, {migration.checksum[:12]} "
                "on disk); restore the file and add a new migration for the change"
            )
