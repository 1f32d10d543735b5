"""The packaged migrations as plain files, for tests that edit them or stop part-way.

``MIGRATIONS_DIR`` is package data (a ``Traversable``, not necessarily a folder on disk), so a
test copies the files it needs by what ``discover`` read rather than by path.
"""

from __future__ import annotations

from pathlib import Path

import asyncpg
import pytest

from engram.generations import schema as generation_schema
from engram.projections.migrate import discover


def copy_migrations(target: Path, *, below: int | None = None) -> Path:
    """Write every packaged migration (only those numbered below ``below``, when given) into
    ``target`` under its own file name; return ``target`` for ``migrate(conn, target)``."""
    target.mkdir(parents=True, exist_ok=True)
    for migration in discover():
        if below is None or migration.version < below:
            name = f"{migration.version:04d}_{migration.name}.sql"
            (target / name).write_text(migration.sql, encoding="utf-8")
    return target


async def create_generation_as_of_now(conn: asyncpg.Connection, generation_id: str) -> str:
    """Register a building generation and create its schema as the code of the database's
    present version did: every per-generation table that ``public`` has by now (a database
    migrated part-way lacks tables later code copies). Returns the schema's name."""
    schema = f"gen_{generation_id}"
    present = {
        row["tablename"]
        for row in await conn.fetch("SELECT tablename FROM pg_tables WHERE schemaname = 'public'")
    }
    await conn.execute(
        "INSERT INTO generation (generation_id, schema_name, policy_version, status) "
        "VALUES ($1, $2, 'v', 'building')",
        generation_id,
        schema,
    )
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(
            generation_schema,
            "GENERATION_TABLES",
            tuple(t for t in generation_schema.GENERATION_TABLES if t in present),
        )
        await generation_schema.create_generation_schema(conn, schema)
    return schema
