"""A database that drops every connection and refuses new ones for a while (a restart, a network
partition) pauses formation and projection; it does not end the worker, lose a turn or write
one twice. PostgreSQL is real; a TCP forwarder in front of it cuts and restores the network."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path

import asyncpg
import pytest

from engram.ingest.producer import EpisodeProducer
from engram.ingest.topics import ensure_topics
from engram.projections.beliefs.digest import drop_projections, projection_digest
from engram.projections.beliefs.projector import BeliefProjector
from engram.watermarks.waiting import wait_until_formed
from tests.support.conditions import wait_until
from tests.support.episodes import turn
from tests.support.isolation import Isolated, running_worker
from tests.support.projecting import (
    city_batches,
    publish_batches,
    run_count,
    run_projector_until,
)
from tests.support.tcp_proxy import TcpProxy

pytestmark = pytest.mark.integration


@pytest.fixture
async def proxy(isolated: Isolated) -> AsyncIterator[TcpProxy]:
    proxy = await TcpProxy.in_front_of_url(isolated.database_url)
    try:
        yield proxy
    finally:
        await proxy.close()


async def test_the_projector_pauses_through_an_outage_and_loses_and_duplicates_nothing(
    isolated: Isolated, pool: asyncpg.Pool, proxy: TcpProxy
) -> None:
    kafka = isolated.kafka(partitions=1)
    await ensure_topics(kafka)
    batches = city_batches(isolated.tenant, 24)
    await publish_batches(kafka, batches)
    through_proxy = await asyncpg.create_pool(
        proxy.url(isolated.database_url), min_size=1, max_size=2
    )
    projector: BeliefProjector

    def cut_after_eight(_: object) -> None:
        if projector.projected == 8:
            proxy.cut()

    projector = BeliefProjector(kafka, through_proxy, on_outcome=cut_after_eight, max_chunk=1)
    task = asyncio.create_task(projector.run())

    def alive_and(condition: bool) -> bool:
        if task.done():
            task.result()  # raises what ended it
            raise AssertionError("the projector stopped during the outage")
        return condition

    try:
        await wait_until(
            lambda: alive_and(projector.outages >= 3),
            timeout_s=30,
            what="the projector met the outage and retried",
        )
        # The other lane's chunk in flight at the cut may have committed just before it.
        written = await run_count(pool)
        assert 8 <= written <= 9
        retried = projector.outages
        await wait_until(
            lambda: alive_and(projector.outages > retried),
            timeout_s=30,
            what="the projector retried again",
        )
        assert await run_count(pool) == written, (
            "nothing is written while the database is unreachable"
        )
        await proxy.restore()

        async def all_projected() -> bool:
            return alive_and(await run_count(pool) == 24)

        await wait_until(all_projected, timeout_s=60, what="every batch projected")
    finally:
        projector.stop()
        await task
        await through_proxy.close()
    survived = await projection_digest(pool)

    # The same log projected with no outage gives the same tables.
    async with pool.acquire() as conn:
        await drop_projections(conn)
    straight = isolated.kafka(
        partitions=1, claims_topic=kafka.claims_topic + ".straight", group_id="straight"
    )
    await ensure_topics(straight)
    await publish_batches(straight, batches)
    await run_projector_until(straight, pool, count=24, max_chunk=500)
    assert await projection_digest(pool) == survived


async def test_a_worker_forms_through_a_database_outage_without_exiting(
    isolated: Isolated, pool: asyncpg.Pool, proxy: TcpProxy, tmp_path: Path
) -> None:
    kafka = isolated.kafka(partitions=1)
    await ensure_topics(kafka)
    t = isolated.tenant
    before = [turn(t, "ana", "garden", f"I use Tool{n}.", seq=n) for n in range(3)]
    during = [turn(t, "ana", "garden", f"I use Tool{n}.", seq=n) for n in range(3, 8)]
    env = isolated.env()
    env["ENGRAM_DATABASE_URL"] = proxy.url(isolated.database_url)
    log_path = tmp_path / "worker.log"

    with running_worker(isolated, log_path=log_path, env=env) as worker:
        async with EpisodeProducer(kafka) as producer:
            await producer.publish_many(before)
            await wait_until_formed(pool, [e.event_id for e in before], timeout_s=90)

            proxy.cut()
            await producer.publish_many(during)

        def retrying(operation: str) -> bool:
            assert worker.poll() is None, "the worker exited during the outage"
            return any(
                '"database.unavailable"' in line and operation in line
                for line in log_path.read_text().splitlines()
            )

        await wait_until(
            lambda: retrying("backlog.record_pending"),
            timeout_s=60,
            what="formation met the outage and is retrying",
        )
        assert await run_count(pool) == len(before)
        await proxy.restore()
        await wait_until_formed(pool, [e.event_id for e in during], timeout_s=90)
        assert worker.poll() is None
    assert await run_count(pool) == len(before) + len(during)
