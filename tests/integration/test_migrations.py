"""Migrations apply once, in order, and an applied file that was edited is refused; numbers may
skip (parallel work is numbered ahead) but never go back below what a database has."""

from __future__ import annotations

import uuid
from pathlib import Path

import asyncpg
import pytest

from engram.formation.vocabulary import RELATIONS
from engram.projections.messages.store import recount_stats
from engram.projections.migrate import MigrationError, discover, migrate
from tests.support.databases import create_database, drop_database
from tests.support.migrations import copy_migrations, create_generation_as_of_now
from tests.support.services import Services

pytestmark = pytest.mark.integration


async def test_migrating_twice_applies_nothing_the_second_time(fresh_database: str) -> None:
    conn = await asyncpg.connect(fresh_database)
    try:
        assert await migrate(conn) == []
        versions = await conn.fetch("SELECT version, checksum FROM schema_migrations ORDER BY 1")
        assert [r["version"] for r in versions] == [m.version for m in discover()]
        assert await conn.fetchval("SELECT count(*) FROM relation") == len(RELATIONS)
    finally:
        await conn.close()


async def test_an_applied_migration_that_was_edited_is_refused(
    fresh_database: str, tmp_path: Path, services: Services
) -> None:
    edited = tmp_path / "migrations"
    copy_migrations(edited)
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
    copy_migrations(late)
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


async def test_events_pending_before_0017_are_still_pending_after_it_live_and_in_generations(
    services: Services, tmp_path: Path
) -> None:
    """0017 moves "not yet published" from the outbox's ``published_at`` to a table of its own,
    in the live schema and in each generation created before it, keeping the outbox order."""
    before = copy_migrations(tmp_path / "migrations", below=17)
    name = f"engram_{uuid.uuid4().hex[:12]}"
    url = await create_database(services.database_url, name, migrated=False)
    conn = await asyncpg.connect(url)
    try:
        await migrate(conn, before)
        assert await create_generation_as_of_now(conn, "g1") == "gen_g1"
        ids = [uuid.uuid4() for _ in range(4)]
        for schema in ("public", "gen_g1"):
            for n, event_id in enumerate(ids):
                await conn.execute(
                    f"INSERT INTO {schema}.memory_event_outbox "
                    "(event_id, tenant, principal, payload, published_at) "
                    "VALUES ($1, 't', 'ana', '{}', CASE WHEN $2 THEN now() END)",
                    event_id,
                    n == 1,
                )
        await migrate(conn)
        for schema in ("public", "gen_g1"):
            pending = await conn.fetch(
                f"SELECT event_id FROM {schema}.memory_event_pending ORDER BY sequence"
            )
            assert [r["event_id"] for r in pending] == [ids[0], ids[2], ids[3]], schema
            assert await conn.fetchval(f"SELECT count(*) FROM {schema}.memory_event_outbox") == 4
        await conn.execute(
            "INSERT INTO gen_g1.memory_event_pending (event_id, tenant, principal) "
            "VALUES ($1, 't', 'ana')",
            uuid.uuid4(),
        )
        last = await conn.fetchval("SELECT max(sequence) FROM gen_g1.memory_event_pending")
        assert last == 4, "the generation numbers its pending events with a sequence of its own"
    finally:
        await conn.close()
        await drop_database(services.database_url, name)


async def test_0019_keys_evidence_by_project_too_live_and_in_generations(
    services: Services, tmp_path: Path
) -> None:
    """0019 replaces evidence's (belief, episode, message) key with one that names the project
    as well, in the live schema and in each generation created before it: one principal's
    episodes under one event id in two projects can each cite the belief; one project cannot
    cite it twice."""
    before = copy_migrations(tmp_path / "migrations", below=19)
    name = f"engram_{uuid.uuid4().hex[:12]}"
    url = await create_database(services.database_url, name, migrated=False)
    conn = await asyncpg.connect(url)
    try:
        await migrate(conn, before)
        assert await create_generation_as_of_now(conn, "g1") == "gen_g1"
        await migrate(conn)
        belief, episode = uuid.uuid4(), uuid.uuid4()
        for schema in ("public", "gen_g1"):
            keys = await conn.fetch(
                "SELECT pg_get_constraintdef(oid) AS def FROM pg_constraint "
                "WHERE conrelid = $1::regclass AND contype = 'u'",
                f"{schema}.evidence",
            )
            assert [k["def"] for k in keys] == [
                "UNIQUE (belief_id, episode_id, message_ordinal, project)"
            ], schema
            insert = (
                f"INSERT INTO {schema}.evidence (evidence_id, belief_id, tenant, principal, "
                "project, session, episode_id, source_topic, source_partition, source_offset, "
                "message_ordinal, role, quote, span_start, span_end, extractor, run_id, "
                "occurred_at) VALUES (gen_random_uuid(), $1, 't', 'ana', $2, 's', $3, 'e', 0, 0, "
                "0, 'user', 'q', 0, 1, 'x', gen_random_uuid(), now())"
            )
            await conn.execute(insert, belief, "garden", episode)
            await conn.execute(insert, belief, "kitchen", episode)
            with pytest.raises(asyncpg.UniqueViolationError):
                await conn.execute(insert, belief, "garden", episode)
    finally:
        await conn.close()
        await drop_database(services.database_url, name)


async def test_0027_counts_the_messages_already_indexed_live_and_in_generations(
    services: Services, tmp_path: Path
) -> None:
    """0027 adds BM25's postings and counts beside ``message``: the messages indexed before it,
    in the live schema and in a generation created before it, are counted exactly as the
    indexer's writes count them (a recount), and a generation created after it has the tables."""
    before = copy_migrations(tmp_path / "migrations", below=27)
    name = f"engram_{uuid.uuid4().hex[:12]}"
    url = await create_database(services.database_url, name, migrated=False)
    conn = await asyncpg.connect(url)
    tables = ("message_term", "message_term_stats", "message_scope_stats")
    try:
        await migrate(conn, before)
        assert await create_generation_as_of_now(conn, "g1") == "gen_g1"
        for schema in ("public", "gen_g1"):
            await conn.execute(
                f"INSERT INTO {schema}.message (tenant, principal, project, session, episode_id, "
                "message_ordinal, role, content, occurred_at, source_partition, source_offset) "
                "SELECT 't', 'ana', p, 's', gen_random_uuid(), 0, r, c, now(), 0, n "
                "FROM unnest($1::text[], $2::text[], $3::text[]) WITH ORDINALITY AS x(p, r, c, n)",
                ["garden", "garden", "kitchen"],
                ["user", "assistant", "user"],
                ["Japan, Japan and a kimono.", "Japan is lovely.", "Ramen in Japan."],
            )
        await migrate(conn)
        assert await create_generation_as_of_now(conn, "g2") == "gen_g2"
        for schema in ("public", "gen_g1"):
            migrated = {
                t: sorted(map(tuple, await conn.fetch(f"SELECT * FROM {schema}.{t}")))
                for t in tables
            }
            await conn.execute(f"SET search_path TO {schema}")
            await recount_stats(conn)
            await conn.execute("SET search_path TO public")
            recounted = {
                t: sorted(map(tuple, await conn.fetch(f"SELECT * FROM {schema}.{t}")))
                for t in tables
            }
            assert migrated == recounted, schema
            japan = await conn.fetch(
                f"SELECT role, project, messages FROM {schema}.message_term_stats "
                "WHERE lexeme = 'japan' ORDER BY role, project"
            )
            assert [tuple(r) for r in japan] == [
                ("assistant", "garden", 1),
                ("user", "garden", 1),
                ("user", "kitchen", 1),
            ]
        for table in tables:
            assert await conn.fetchval("SELECT to_regclass($1)", f"gen_g2.{table}") is not None
    finally:
        await conn.close()
        await drop_database(services.database_url, name)
