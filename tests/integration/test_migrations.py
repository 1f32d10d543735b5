"""Migrations apply once, in order, and an applied file that was edited is refused; numbers may
skip (parallel work is numbered ahead) but never go back below what a database has."""

from __future__ import annotations

import shutil
from pathlib import Path

import asyncpg
import pytest

from projections.migrate import MIGRATIONS_DIR, MigrationError, discover, migrate
from tests.support.services import Services

pytestmark = pytest.mark.integration


async def test_migrating_twice_applies_nothing_the_second_time(fresh_database: str) -> None:
    conn = await asyncpg.connect(fresh_database)
    try:
        assert await migrate(conn) == []
        versions = await conn.fetch("SELECT version, checksum FROM schema_migrations ORDER BY 1")
        assert [r["version"] for r in versions] == [m.version for m in discover()]
        assert await conn.fetchval("SELECT count(*) FROM relation") == 39
    finally:
        await conn.close()


async def test_an_applied_migration_that_was_edited_is_refused(
    fresh_database: str, tmp_path: Path, services: Services
) -> None:
    edited = tmp_path / "migrations"
    shutil.copytree(MIGRATIONS_DIR, edited)
    first = sorted(edited.glob("0001_*.sql"))[0]
    first.write_text(first.read_text() + "\n-- an innocent-looking edit\n")
    conn = await asyncpg.connect(fresh_database)
    try:
        with pytest.raises(MigrationError, match="was edited after it was applied"):
            await migrate(conn, edited)
    finally:
        await conn.close()


async def test_a_migration_numbered_below_one_already_applied_is_refused(
    fresh_database: str, tmp_path: Path
) -> None:
    late = tmp_path / "migrations"
    shutil.copytree(MIGRATIONS_DIR, late)
    newest = discover()[-1].version
    conn = await asyncpg.connect(fresh_database)
    try:
        (late / f"{newest + 2:04d}_ahead.sql").write_text("SELECT 2;\n")
        assert [m.name for m in await migrate(conn, late)] == ["ahead"]
        (late / f"{newest + 1:04d}_late.sql").write_text("SELECT 1;\n")
        with pytest.raises(MigrationError, match=f"{newest + 1:04d}_late would be applied after"):
            await migrate(conn, late)
    finally:
        await conn.close()


async def test_the_database_refuses_a_relation_outside_the_vocabulary(fresh_database: str) -> None:
    conn = await asyncpg.connect(fresh_database)
    try:
        with pytest.raises(asyncpg.ForeignKeyViolationError):
            await conn.execute(
                "INSERT INTO consolidation_run VALUES (gen_random_uuid(), 't', 'p', 'x', 's', "
                "gen_random_uuid(), 'turn', 'project:x', 'v', 'e', 0, 0, now(), 1, 1, 1, 0, 0, 0, "
                "0, 0, 0, '{}'::jsonb) RETURNING run_id"
            )
            run_id = await conn.fetchval("SELECT run_id FROM consolidation_run")
            await conn.execute(
                "INSERT INTO belief (belief_id, tenant, principal, subject_kind, subject_key, "
                "relation, object_kind, object_text, statement, belief_type, polarity, authority, "
                "scope, origin_scopes, portability, confidence, status, is_single, "
                "last_reinforced_at, valid_from, known_from, formation_run, policy_version, role) "
                "VALUES (gen_random_uuid(), 't', 'p', 'speaker', 'speaker', 'is_secretly', "
                "'value', 'x', 's', 'fact', 'assert', 'user', 'project:x', '{project:x}', "
                "'contextual', 0.5, 'active', false, now(), now(), now(), $1, 'v', 'user')",
                run_id,
            )
    finally:
        await conn.close()
