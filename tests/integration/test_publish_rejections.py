"""A claims batch Kafka will not take is dead-lettered with its reason, its episode parked, and
the partition goes on: later episodes of the same principal form, the watermark passes it, and
the consumer's committed offset moves past it (no stranded acknowledgements)."""

from __future__ import annotations

import time
from pathlib import Path

import asyncpg
import pytest
from aiokafka import AIOKafkaConsumer, TopicPartition

from engram.infra.settings import KafkaSettings
from engram.ingest.producer import EpisodeProducer
from engram.ingest.topics import ensure_topics
from engram.projections.reads.queries import list_beliefs
from engram.watermarks.backlog import list_parked, watermark
from engram.watermarks.waiting import wait_for_watermarks, wait_until_formed
from tests.support.conditions import wait_until
from tests.support.episodes import turn
from tests.support.isolation import Isolated, running_worker

pytestmark = pytest.mark.integration

LIMIT = 4096
"""The producer's max request size in this test: a one-line turn's batch is ~1.1 KB, the
thirty-preference turn's ~7.7 KB."""


async def _dead_letter_headers(kafka: KafkaSettings) -> list[dict[str, bytes]]:
    consumer = AIOKafkaConsumer(
        kafka.dlq_topic, bootstrap_servers=kafka.bootstrap, auto_offset_reset="earliest"
    )
    await consumer.start()
    found: list[dict[str, bytes]] = []
    deadline = time.monotonic() + 60
    try:
        while not found and time.monotonic() < deadline:
            for records in (await consumer.getmany(timeout_ms=500)).values():
                found += [dict(record.headers) for record in records]
    finally:
        await consumer.stop()
    return found


async def _committed(kafka: KafkaSettings) -> int:
    consumer = AIOKafkaConsumer(bootstrap_servers=kafka.bootstrap, group_id=kafka.group_id)
    await consumer.start()
    try:
        return await consumer.committed(TopicPartition(kafka.episodes_topic, 0)) or -1
    finally:
        await consumer.stop()


async def test_a_claims_batch_too_large_for_kafka_is_dead_lettered_and_later_episodes_form(
    isolated: Isolated, pool: asyncpg.Pool, tmp_path: Path
) -> None:
    kafka = isolated.kafka(partitions=1)
    await ensure_topics(kafka)
    tenant = isolated.tenant
    before = turn(tenant, "ana", "p", "I live in Lisbon.", seq=1)
    huge = turn(tenant, "ana", "p", " ".join(f"I like city{i}." for i in range(30)), seq=2)
    after = turn(tenant, "ana", "p", "I work at Acme.", seq=3)
    async with EpisodeProducer(kafka) as producer:
        appended = [await producer.publish(e) for e in (before, huge, after)]

    env = isolated.env(partitions=1, producer_max_request_bytes=LIMIT)
    with running_worker(isolated, log_path=tmp_path / "worker.log", env=env):
        await wait_until_formed(pool, [before.event_id, after.event_id], timeout_s=90)
        await wait_for_watermarks(pool, [appended[-1]], timeout_s=60)
        await wait_until(
            lambda: _committed_past(kafka, appended[-1].offset),
            timeout_s=60,
            what="the formation group's committed offset past the last episode",
        )

    beliefs = await list_beliefs(pool, tenant=tenant, principal="ana")
    assert {(b.relation, b.object) for b in beliefs} == {
        ("lives_in", "Lisbon"),
        ("works_at", "Acme"),
    }
    parked = await list_parked(pool, tenant=tenant, project="p")
    assert [(p.episode_id, p.offset, p.failure_kind) for p in parked] == [
        (huge.event_id, appended[1].offset, "claims_too_large")
    ]
    mark = await watermark(pool, tenant=tenant, project="p")
    assert (mark.formed_offset, mark.parked, mark.pending) == (appended[-1].offset, 1, 0)
    letters = await _dead_letter_headers(kafka)
    assert [h["engram.reason"] for h in letters] == [b"claims_too_large"]
    assert int(letters[0]["engram.source.offset"]) == appended[1].offset
    assert b"MessageSizeTooLargeError" in letters[0]["engram.detail"]


async def _committed_past(kafka: KafkaSettings, offset: int) -> bool:
    return await _committed(kafka) > offset
