"""The belief projector's sessions leave nothing behind, so its pool does not reset them.

``engram projector`` makes its pool with ``stateless_sessions`` (no ``RESET ALL`` and friends
on every release, about five round trips a chunk). That is only safe while nothing the
projector sends leaves session state: a ``SET``, a session-level advisory lock, a cursor held
past its transaction, a ``LISTEN``. These tests run the real projector through such a pool —
rewinds, redeliveries, kills mid-transaction, outbox drains — and then look at every session
the pool holds."""

from __future__ import annotations

import random
from collections.abc import AsyncIterator

import asyncpg
import pytest
from pydantic import SecretStr

from engram.infra.db import create_pool
from engram.infra.settings import DatabaseSettings
from engram.ingest.topics import ensure_topics
from engram.projections.beliefs.digest import drop_projections, projection_digest
from tests.support.isolation import Isolated
from tests.support.projecting import (
    city_batches,
    kill_projector_after,
    publish_batches,
    run_count,
    run_projector_until,
    run_projector_until_applied,
)

pytestmark = pytest.mark.integration

POOL_SIZE = 3

SESSION_STATE = """
SELECT
  ARRAY(SELECT name || '=' || setting FROM pg_settings
        WHERE source = 'session' AND setting IS DISTINCT FROM reset_val ORDER BY name)
    AS settings,
  (SELECT count(*) FROM pg_cursors) AS cursors,
  ARRAY(SELECT c FROM pg_listening_channels() AS c ORDER BY c) AS channels,
  (SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND pid = pg_backend_pid())
    AS advisory_locks,
  pg_current_xact_id_if_assigned() IS NULL AS outside_a_transaction
"""


@pytest.fixture
async def stateless_pool(fresh_database: str) -> AsyncIterator[asyncpg.Pool]:
    """A pool made as ``engram projector`` makes its own (``projections/runner.py``)."""
    settings = DatabaseSettings(url=SecretStr(fresh_database), pool_max=POOL_SIZE)
    pool = await create_pool(settings, role="engram-projector", stateless_sessions=True)
    yield pool
    await pool.close()


async def _states_of_every_session(pool: asyncpg.Pool) -> list[tuple[object, ...]]:
    """The session state of each of the pool's connections, all held at once (so that each
    one the projector used is looked at, not the same one again)."""
    held = [await pool.acquire() for _ in range(POOL_SIZE)]
    try:
        return [tuple(await conn.fetchrow(SESSION_STATE)) for conn in held]
    finally:
        for conn in held:
            await pool.release(conn)


async def _new_session_state(url: str) -> tuple[object, ...]:
    conn = await asyncpg.connect(url, server_settings={"application_name": "engram-projector"})
    try:
        return tuple(await conn.fetchrow(SESSION_STATE))
    finally:
        await conn.close()


async def test_the_projectors_sessions_end_each_chunk_as_new_ones_begin(
    isolated: Isolated, stateless_pool: asyncpg.Pool, fresh_database: str
) -> None:
    kafka = isolated.kafka(partitions=2)
    await ensure_topics(kafka)
    batches = city_batches(isolated.tenant, 40)
    late = batches[5:20]
    random.Random(7).shuffle(late)  # late batches: principals are undone and resolved again
    await publish_batches(kafka, [*batches[:5], *late, *batches[20:]])
    await kill_projector_after(kafka, stateless_pool, count=12, max_chunk=3)
    await run_projector_until_applied(kafka, stateless_pool, runs=40)
    await publish_batches(kafka, batches[:10])  # redelivered: each is a no-op
    await run_projector_until(kafka, stateless_pool, count=10, max_chunk=4)
    assert await run_count(stateless_pool) == 40

    states = await _states_of_every_session(stateless_pool)
    assert states == [await _new_session_state(fresh_database)] * POOL_SIZE


async def test_killed_mid_transaction_through_an_unreset_pool_loses_and_duplicates_nothing(
    isolated: Isolated, stateless_pool: asyncpg.Pool
) -> None:
    kafka = isolated.kafka(partitions=1)
    await ensure_topics(kafka)
    await publish_batches(kafka, city_batches(isolated.tenant, 30))
    for kill_at in (3, 11, 19):
        count = kill_at - await run_count(stateless_pool)
        await kill_projector_after(kafka, stateless_pool, count=count, max_chunk=4)
    await run_projector_until_applied(kafka, stateless_pool, runs=30)
    assert await run_count(stateless_pool) == 30
    killed = await projection_digest(stateless_pool)

    async with stateless_pool.acquire() as conn:
        await drop_projections(conn)
    await run_projector_until(kafka, stateless_pool, count=30)
    assert await projection_digest(stateless_pool) == killed
    # A kill left no transaction open on a connection handed out again.
    assert all(state[-1] for state in await _states_of_every_session(stateless_pool))
