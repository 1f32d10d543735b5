"""Exactly-once projection: a projector killed between batches and restarted loses nothing
and writes nothing twice, because its offsets commit in the same transaction as its rows."""

from __future__ import annotations

import asyncio

import asyncpg
import pytest
from aiokafka import AIOKafkaConsumer, AIOKafkaProducer, TopicPartition

from engram.infra.settings import KafkaSettings
from engram.ingest.topics import ensure_topics
from engram.projections.beliefs.digest import drop_projections, projection_digest
from engram.projections.beliefs.store import stored_offsets
from engram.projections.following import Tracking
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


async def test_a_projector_killed_between_batches_loses_and_duplicates_nothing(
    isolated: Isolated, pool: asyncpg.Pool, services: object
) -> None:
    kafka = isolated.kafka(partitions=1)
    await ensure_topics(kafka)
    batches = city_batches(isolated.tenant, 24)
    await publish_batches(kafka, batches)

    # First run: stop it part-way, as a kill between batches would (the other lane's chunk
    # in flight commits too).
    await run_projector_until(kafka, pool, count=9)
    partial = await run_count(pool)
    assert 9 <= partial <= 10

    # Hard restart with a new consumer: it must resume from the stored offsets.
    await run_projector_until_applied(kafka, pool, runs=24)
    assert await run_count(pool) == 24
    assert await pool.fetchval("SELECT count(*) FROM evidence") == await pool.fetchval(
        "SELECT count(*) FROM belief"
    )

    # Redelivering every batch (as faust does after a rebalance) changes nothing: every record
    # from the stored offset on is handled, the 24 copies last.
    before = await projection_digest(pool)
    await publish_batches(kafka, batches)
    stored = (await stored_offsets(pool, kafka.claims_topic))[0]
    await run_projector_until(kafka, pool, count=48 - stored, max_chunk=500)
    assert await projection_digest(pool) == before


async def test_an_interrupted_projection_equals_an_uninterrupted_one(
    isolated: Isolated, pool: asyncpg.Pool
) -> None:
    kafka = isolated.kafka(partitions=1)
    await ensure_topics(kafka)
    batches = city_batches(isolated.tenant, 16)
    await publish_batches(kafka, batches)
    await run_projector_until(kafka, pool, count=5)
    await run_projector_until_applied(kafka, pool, runs=16)
    interrupted = await projection_digest(pool)

    other = isolated.kafka(
        partitions=1, claims_topic=kafka.claims_topic + ".b", group_id=kafka.group_id + "b"
    )
    await ensure_topics(other)
    await publish_batches(other, batches)
    async with pool.acquire() as conn:
        await drop_projections(conn)
    # Uninterrupted, and in one chunk: one transaction for all sixteen equals one each.
    await run_projector_until(other, pool, count=16, max_chunk=500)
    assert await projection_digest(pool) == interrupted


async def test_a_projector_cancelled_mid_transaction_loses_and_duplicates_nothing(
    isolated: Isolated, pool: asyncpg.Pool
) -> None:
    kafka = isolated.kafka(partitions=1)
    await ensure_topics(kafka)
    batches = city_batches(isolated.tenant, 30)
    await publish_batches(kafka, batches)
    for kill_at in (3, 11, 19):
        await kill_projector_after(kafka, pool, count=kill_at - await run_count(pool), max_chunk=4)
    await run_projector_until_applied(kafka, pool, runs=30)
    assert await run_count(pool) == 30
    killed = await projection_digest(pool)

    async with pool.acquire() as conn:
        await drop_projections(conn)
    await run_projector_until(kafka, pool, count=30)
    assert await projection_digest(pool) == killed


@pytest.fixture
def slow_assignment(monkeypatch: pytest.MonkeyPatch) -> None:
    """Make reading the stored offsets slow, as a loaded database would: aiokafka installs an
    assignment and starts fetching it from Kafka's committed offsets before it awaits the
    listener that seeks to the stored ones, so a slow read widens that window."""
    real = Tracking.stored_offsets  # what every follower's seek reads

    async def slow_stored_offsets(
        self: Tracking, db: asyncpg.Pool | asyncpg.Connection, topic: str
    ) -> dict[int, int]:
        # Injected latency, not synchronisation: the assertions hold for any delay (with none
        # the race is merely unlikely), the delay only makes the window wide.
        await asyncio.sleep(0.5)
        return await real(self, db, topic)

    monkeypatch.setattr(Tracking, "stored_offsets", slow_stored_offsets)


async def test_a_restart_with_a_slow_assignment_resumes_at_the_stored_offsets(
    isolated: Isolated, pool: asyncpg.Pool, slow_assignment: None
) -> None:
    kafka = isolated.kafka(partitions=1)
    await ensure_topics(kafka)
    await publish_batches(kafka, city_batches(isolated.tenant, 24))
    await run_projector_until(kafka, pool, count=9)
    assert 9 <= await run_count(pool) <= 10
    stored = (await stored_offsets(pool, kafka.claims_topic))[0]

    # Counting every record handled from the stored offset on: one fetched before the seek
    # would be counted too, and the projector would stop short of the last batches.
    await run_projector_until(kafka, pool, count=24 - stored)
    assert await run_count(pool) == 24


async def test_a_replay_after_dropping_the_tables_applies_claims_in_log_order(
    isolated: Isolated, pool: asyncpg.Pool, slow_assignment: None
) -> None:
    batches = city_batches(isolated.tenant, 24)
    kafka = isolated.kafka(partitions=1)
    await ensure_topics(kafka)
    await publish_batches(kafka, batches)
    await run_projector_until(kafka, pool, count=24)
    uninterrupted = await projection_digest(pool)

    # The tables are dropped for a replay while the group's offset in Kafka stays where it was
    # (committed here explicitly: where a stopped projector left it depends on its last fetch).
    async with pool.acquire() as conn:
        await drop_projections(conn)
    await _commit_in_kafka(kafka, offset=16)
    # The replay must start at the beginning, not apply the newest claims first.
    await run_projector_until(kafka, pool, count=24)
    assert await run_count(pool) == 24
    assert await projection_digest(pool) == uninterrupted


async def _commit_in_kafka(kafka: KafkaSettings, *, offset: int) -> None:
    consumer = AIOKafkaConsumer(
        bootstrap_servers=kafka.bootstrap,
        group_id=f"{kafka.group_id}-beliefs",
        enable_auto_commit=False,
    )
    await consumer.start()
    try:
        partition = TopicPartition(kafka.claims_topic, 0)
        consumer.assign([partition])
        await consumer.commit({partition: offset})
    finally:
        await consumer.stop()


async def test_an_undecodable_claims_record_is_passed_over_and_its_chunk_still_commits(
    isolated: Isolated, pool: asyncpg.Pool
) -> None:
    kafka = isolated.kafka(partitions=1)
    await ensure_topics(kafka)
    batches = city_batches(isolated.tenant, 6)
    await publish_batches(kafka, batches[:3])
    producer = AIOKafkaProducer(bootstrap_servers=kafka.bootstrap, enable_idempotence=True)
    await producer.start()
    try:
        await producer.send_and_wait(kafka.claims_topic, b'{"not": "a claims batch"}')
    finally:
        await producer.stop()
    await publish_batches(kafka, batches[3:])

    await run_projector_until(kafka, pool, count=6, max_chunk=500)
    assert await run_count(pool) == 6
    # The stored offset is past every record read, the bad one included: a restart does not
    # read it again.
    assert (
        await pool.fetchval(
            "SELECT next_offset FROM projector_offset WHERE topic = $1", kafka.claims_topic
        )
        == 7
    )
