"""Migration 0015 gives a generation built before 0013 its own ``claims_history`` and moves
that generation's kept batches out of the live table, where a live rewind would read them."""

from __future__ import annotations

import uuid
from pathlib import Path

import asyncpg
import pytest

from engram.generations import schema as generation_schema
from engram.generations.registry import register_generation
from engram.generations.schema import GENERATION_TABLES, create_generation_schema
from engram.projections.migrate import migrate
from tests.support.migrations import copy_migrations

pytestmark = pytest.mark.integration

_PUBLIC_TABLES = "SELECT tablename FROM pg_tables WHERE schemaname = 'public'"
_RUN = """
INSERT INTO {schema}.consolidation_run (run_id, tenant, principal, project, session, episode_id,
    trigger, scope, policy_version, source_topic, source_partition, source_offset, occurred_at,
    proposed, admitted, committed, reinforced, superseded, conflicted, refused, overflow,
    retracted)
VALUES ($1, 't', 'p', 'proj', 's', $1, 'turn', 'project', 'v', 'claims', 0, 0, now(),
    0, 0, 0, 0, 0, 0, 0, 0, 0)
"""
_KEPT = """
INSERT INTO public.claims_history (run_id, tenant, principal, order_key, payload)
VALUES ($1, 't', 'p', '\\x00'::bytea, '\\x7b7d'::bytea)
"""


def migrations_before(version: int, tmp_path: Path) -> Path:
    """A copy of the migrations folder holding only those numbered below ``version``."""
    folder = tmp_path / f"before-{version:04d}"
    return copy_migrations(folder, below=version)


async def kept_runs(conn: asyncpg.Connection, schema: str) -> set[uuid.UUID]:
    return {r["run_id"] for r in await conn.fetch(f"SELECT run_id FROM {schema}.claims_history")}


async def test_a_generation_built_before_claims_history_gets_its_own_and_its_rows(
    unmigrated: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    conn = await asyncpg.connect(unmigrated)
    try:
        await migrate(conn, migrations_before(13, tmp_path))
        then = {r["tablename"] for r in await conn.fetch(_PUBLIC_TABLES)}
        monkeypatch.setattr(
            generation_schema, "GENERATION_TABLES", tuple(t for t in GENERATION_TABLES if t in then)
        )
        generation = await register_generation(conn, policy_version="v", policy_yaml="")
        schema = generation.schema_name
        await create_generation_schema(conn, schema)
        await migrate(conn, migrations_before(15, tmp_path))
        assert await conn.fetchval("SELECT to_regclass($1)", f"{schema}.claims_history") is None

        # What the projector of that generation wrote: its runs in its own schema, the batches
        # it kept in public's claims_history (search_path found no table of its own).
        generations_own, live_own, both = uuid.uuid4(), uuid.uuid4(), uuid.uuid4()
        for run in (generations_own, both):
            await conn.execute(_RUN.format(schema=schema), run)
        for run in (live_own, both):
            await conn.execute(_RUN.format(schema="public"), run)
        for run in (generations_own, live_own, both):
            await conn.execute(_KEPT, run)

        applied = await migrate(conn)
        assert applied[0].name == "bounded_resolution"
        assert await kept_runs(conn, schema) == {generations_own}
        assert await kept_runs(conn, "public") == {live_own, both}
        for owner in (schema, "public"):
            assert await conn.fetchval(
                "SELECT count(*) FROM information_schema.columns WHERE table_schema = $1 "
                "AND table_name = 'claims_history' AND column_name = 'undo'",
                owner,
            ), owner
    finally:
        await conn.close()
