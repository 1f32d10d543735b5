"""Lanes of one claims partition commit out of offset order, and still the stored offset never
passes a record that has not committed; two projectors of one partition at once (one a
rebalance has not yet stopped) apply each principal's batches one transaction after the other.
What lanes project equals what one chunk after the other projects, killed or not."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator

import asyncpg
import pytest

from engram.infra.settings import KafkaSettings
from engram.ingest.topics import ensure_topics
from engram.projections.beliefs.digest import drop_projections, projection_digest
from engram.projections.beliefs.projector import BeliefProjector
from engram.projections.beliefs.store import stored_offsets
from engram.projections.principal_lock import PRINCIPAL_LOCK
from engram.schemas.claims import ClaimsBatchFormed
from tests.support.conditions import wait_until
from tests.support.isolation import Isolated
from tests.support.projecting import (
    city_batches,
    kill_projector_after,
    publish_batches,
    run_count,
    run_projector_until_applied,
)

pytestmark = pytest.mark.integration

_HOLD = f"SELECT pg_advisory_lock({PRINCIPAL_LOCK.format(tenant='$1::text', principal='$2::text')})"


@contextlib.asynccontextmanager
async def _holding_principal(database_url: str, tenant: str, principal: str) -> AsyncIterator[None]:
    """Hold a principal's lock from a connection of the test's own: the chunk of whichever lane
    has the principal waits inside its transaction, after its first statement, until released."""
    conn = await asyncpg.connect(database_url)
    try:
        await conn.execute(_HOLD, tenant, principal)
        yield
    finally:
        await conn.close()  # the session ends, and its lock with it


async def _one_lane_digest(
    isolated: Isolated, pool: asyncpg.Pool, batches: list[ClaimsBatchFormed], name: str
) -> str:
    """The projection of ``batches`` by one lane from a topic of this test's own."""
    single = isolated.kafka(
        partitions=1, claims_topic=f"{isolated.prefix}.{name}", group_id=f"{isolated.prefix}{name}"
    )
    await ensure_topics(single)
    await publish_batches(single, batches)
    async with pool.acquire() as conn:
        await drop_projections(conn)
    await run_projector_until_applied(single, pool, runs=len(batches), max_chunk=500, lanes=1)
    return await projection_digest(pool)


async def test_a_lane_held_in_its_transaction_keeps_the_stored_offset_below_its_records(
    isolated: Isolated, pool: asyncpg.Pool
) -> None:
    kafka = isolated.kafka(partitions=1)
    await ensure_topics(kafka)
    batches = city_batches(isolated.tenant, 30)  # principals p0, p1, p2 in turn
    await publish_batches(kafka, batches)
    held = batches[1]
    assert held.principal == "p1"

    async with _holding_principal(isolated.database_url, isolated.tenant, "p1"):
        # Room for p1's records queued behind its held chunk (nine, under max_chunk), so
        # fetching goes on and the other lane gets all of p0's and p2's.
        projector = BeliefProjector(kafka, pool, lanes=2, max_chunk=12)
        task = asyncio.create_task(projector.run())
        try:
            # The other lane commits chunk after chunk while p1's lane waits in its first one.
            await wait_until(
                lambda: _runs_of_others(pool, isolated.tenant, minimum=20),
                timeout_s=60,
                what="the other lane's chunks committed",
            )
            assert not await _runs_of(pool, isolated.tenant, "p1")
            stored = (await stored_offsets(pool, kafka.claims_topic))[0]
            assert stored <= 1, "the stored offset passed a record of the held lane"
        finally:
            task.cancel()  # a kill: p1's chunk never commits
            with contextlib.suppress(asyncio.CancelledError):
                await task

    # Restarted from the stored offset: what the held lane had is applied, the rest skipped.
    await run_projector_until_applied(kafka, pool, runs=30, max_chunk=2)
    assert await run_count(pool) == 30
    lanes = await projection_digest(pool)
    assert lanes == await _one_lane_digest(isolated, pool, batches, "single")


async def _runs_of(pool: asyncpg.Pool, tenant: str, principal: str) -> int:
    return int(
        await pool.fetchval(
            "SELECT count(*) FROM consolidation_run WHERE tenant = $1 AND principal = $2",
            tenant,
            principal,
        )
    )


async def _runs_of_others(pool: asyncpg.Pool, tenant: str, *, minimum: int) -> bool:
    others = await pool.fetchval(
        "SELECT count(*) FROM consolidation_run WHERE tenant = $1 AND principal <> 'p1'", tenant
    )
    return bool(others >= minimum)


async def test_two_projectors_of_one_partition_at_once_project_what_one_does(
    isolated: Isolated, pool: asyncpg.Pool, fresh_database: str
) -> None:
    """As after a rebalance whose old owner has not yet noticed: both read the partition from
    the stored offset and write the same principals' rows, each through a pool of its own."""
    kafka = isolated.kafka(partitions=1)
    await ensure_topics(kafka)
    batches = city_batches(isolated.tenant, 60)

    pools = [await asyncpg.create_pool(fresh_database, min_size=1, max_size=3) for _ in range(2)]
    # Two groups, so Kafka gives both of them the partition at once; the batches come once
    # both are positioned, so both read every one of them.
    projectors = [
        BeliefProjector(_group(kafka, n), own, lanes=2, max_chunk=3) for n, own in enumerate(pools)
    ]
    tasks = [asyncio.create_task(p.run()) for p in projectors]

    async def applied() -> bool:
        for task in tasks:
            if task.done():
                task.result()  # a failed chunk would end its projector: raise it here
        return await run_count(pool) >= len(batches)

    try:
        await wait_until(
            lambda: all(p.readiness()[0] for p in projectors),
            timeout_s=60,
            what="both positioned",
        )
        await publish_batches(kafka, batches)
        await wait_until(applied, timeout_s=90, what="both projectors' runs")
        await wait_until(
            lambda: all(p.projected >= len(batches) for p in projectors),
            timeout_s=90,
            what="both projectors through the partition",
        )
    finally:
        for projector in projectors:
            projector.stop()
        for task in tasks:
            await task
        for own in pools:
            await own.close()
    assert await run_count(pool) == len(batches)
    assert sum(p.projected for p in projectors) >= 2 * len(batches)
    both = await projection_digest(pool)
    assert both == await _one_lane_digest(isolated, pool, batches, "single")


def _group(kafka: KafkaSettings, n: int) -> KafkaSettings:
    return kafka.model_copy(update={"group_id": f"{kafka.group_id}-{n}"})


async def test_lanes_killed_mid_chunk_project_what_one_lane_does(
    isolated: Isolated, pool: asyncpg.Pool
) -> None:
    kafka = isolated.kafka(partitions=1)
    await ensure_topics(kafka)
    batches = city_batches(isolated.tenant, 45)
    await publish_batches(kafka, batches)
    for kill_at in (5, 17, 29):
        count = kill_at - await run_count(pool)
        await kill_projector_after(kafka, pool, count=count, max_chunk=2, lanes=3)
    await run_projector_until_applied(kafka, pool, runs=45, max_chunk=2)
    assert await run_count(pool) == 45
    killed = await projection_digest(pool)
    assert killed == await _one_lane_digest(isolated, pool, batches, "single")
