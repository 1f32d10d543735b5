"""Chunks of different claims partitions are projected side by side, each in its own transaction
with its own stored offset; what they project equals one partition's projection of the same
batches, killed or not, and a principal whose batches sit in two partitions is never resolved
by two chunks at once."""

from __future__ import annotations

from collections.abc import Sequence

import asyncpg
import orjson
import pytest
from aiokafka import AIOKafkaProducer

from engram.infra.settings import KafkaSettings
from engram.ingest.topics import ensure_topics
from engram.projections.beliefs.digest import drop_projections, projection_digest
from engram.schemas.claims import ClaimsBatchFormed
from engram.schemas.common import principal_key
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


async def _publish_round_robin(
    kafka: KafkaSettings, batches: Sequence[ClaimsBatchFormed], partitions: int
) -> None:
    """Each batch to the next partition in turn, whatever its key: every principal's batches
    spread over all of them (as after the topic's partition count was raised)."""
    producer = AIOKafkaProducer(bootstrap_servers=kafka.bootstrap, enable_idempotence=True)
    await producer.start()
    try:
        for i, batch in enumerate(batches):
            await producer.send_and_wait(
                kafka.claims_topic,
                orjson.dumps(batch.model_dump(mode="json")),
                key=principal_key(batch.tenant, batch.principal),
                partition=i % partitions,
            )
    finally:
        await producer.stop()


async def _one_partition_digest(
    isolated: Isolated,
    kafka: KafkaSettings,
    pool: asyncpg.Pool,
    batches: Sequence[ClaimsBatchFormed],
) -> str:
    """The projection of ``batches`` from a one-partition topic of this test's own."""
    single = isolated.kafka(
        partitions=1, claims_topic=f"{kafka.claims_topic}.single", group_id=kafka.group_id + "s"
    )
    await ensure_topics(single)
    await publish_batches(single, batches)
    async with pool.acquire() as conn:
        await drop_projections(conn)
    await run_projector_until(single, pool, count=len(batches), max_chunk=500)
    return await projection_digest(pool)


async def test_partitions_projected_side_by_side_and_killed_equal_one_partition(
    isolated: Isolated, pool: asyncpg.Pool
) -> None:
    kafka = isolated.kafka(partitions=3)
    await ensure_topics(kafka)
    batches = city_batches(isolated.tenant, 45)
    await publish_batches(kafka, batches)
    for kill_at in (7, 19, 31):
        await kill_projector_after(kafka, pool, count=kill_at - await run_count(pool), max_chunk=3)
    await run_projector_until_applied(kafka, pool, runs=45, max_chunk=3)
    assert await run_count(pool) == 45
    side_by_side = await projection_digest(pool)
    assert side_by_side == await _one_partition_digest(isolated, kafka, pool, batches)


async def test_a_principal_in_two_partitions_is_resolved_by_one_chunk_at_a_time(
    isolated: Isolated, pool: asyncpg.Pool
) -> None:
    kafka = isolated.kafka(partitions=2)
    await ensure_topics(kafka)
    batches = city_batches(isolated.tenant, 40)
    await _publish_round_robin(kafka, batches, partitions=2)
    await run_projector_until(kafka, pool, count=40, max_chunk=4)
    assert await run_count(pool) == 40
    spread = await projection_digest(pool)
    assert spread == await _one_partition_digest(isolated, kafka, pool, batches)
