"""The inbox on real Kafka: plaintext turns from a plain producer reach the log exactly once,
refusals are dead-lettered without their bytes, and the inbox keeps nothing it moved."""

from __future__ import annotations

import asyncio
import uuid
from pathlib import Path

import asyncpg
import orjson
import pytest
from aiokafka import AIOKafkaConsumer, AIOKafkaProducer, TopicPartition
from aiokafka.admin import AIOKafkaAdminClient
from aiokafka.admin.config_resource import ConfigResource, ConfigResourceType
from aiokafka.errors import KafkaConnectionError

from engram.ingest.inbox import InboxEpisode, InboxIntake, InboxIntakeFenced
from engram.ingest.inbox_rolling import is_roll_marker
from engram.ingest.topics import ensure_topics, source_partitions
from engram.projections.reads.queries import list_beliefs
from engram.schemas.log import LogEvent
from engram.watermarks.waiting import wait_until_formed
from tests.support.conditions import wait_until
from tests.support.episodes import turn
from tests.support.isolation import Isolated, running_worker

pytestmark = pytest.mark.integration


async def _publish_plain(
    bootstrap: str, topic: str, values: list[bytes], *, spread_over: int = 1
) -> None:
    """What a producer outside Engram does: bytes to a topic, no Engram code; value ``i`` goes
    to partition ``i % spread_over``."""
    producer = AIOKafkaProducer(bootstrap_servers=bootstrap, acks="all")
    await producer.start()
    try:
        for index, value in enumerate(values):
            await producer.send_and_wait(topic, value, partition=index % spread_over)
    finally:
        await producer.stop()


async def _partitions(bootstrap: str, topic: str) -> list[TopicPartition]:
    return [TopicPartition(topic, p) for p in range(await source_partitions(bootstrap, topic))]


async def _read_all(bootstrap: str, topic: str) -> list[tuple[bytes, dict[str, bytes]]]:
    """Every committed record of a topic from its first kept offset, read raw."""
    consumer = AIOKafkaConsumer(
        bootstrap_servers=bootstrap,
        isolation_level="read_committed",
        enable_auto_commit=False,
        auto_offset_reset="earliest",
    )
    await consumer.start()
    try:
        partitions = await _partitions(bootstrap, topic)
        consumer.assign(partitions)
        await consumer.seek_to_beginning(*partitions)
        ends = await consumer.end_offsets(partitions)
        records: list[tuple[bytes, dict[str, bytes]]] = []
        while [tp for tp in partitions if await consumer.position(tp) < ends[tp]]:
            fetched = await consumer.getmany(timeout_ms=500)
            for batch in fetched.values():
                records.extend((r.value or b"", dict(r.headers)) for r in batch)
        return records
    finally:
        await consumer.stop()


async def _kept_in(bootstrap: str, topic: str) -> int:
    """How many records the topic still keeps (end offset minus first kept offset)."""
    consumer = AIOKafkaConsumer(bootstrap_servers=bootstrap)
    await consumer.start()
    try:
        partitions = await _partitions(bootstrap, topic)
        starts = await consumer.beginning_offsets(partitions)
        ends = await consumer.end_offsets(partitions)
        return sum(ends[tp] - starts[tp] for tp in partitions)
    finally:
        await consumer.stop()


def _event_ids(records: list[tuple[bytes, dict[str, bytes]]]) -> list[str]:
    return [orjson.loads(value)["event_id"] for value, _ in records]


async def test_a_plain_producers_turn_forms_once_refusals_are_dead_lettered_and_the_inbox_empties(
    isolated: Isolated, pool: asyncpg.Pool, tmp_path: Path
) -> None:
    kafka = isolated.kafka()
    await ensure_topics(kafka)
    spoken = turn(isolated.tenant, "ana", "garden", "My name is Ana and I live in Zürich.")
    await _publish_plain(
        kafka.bootstrap,
        kafka.inbox_topic,
        [
            spoken.model_dump_json().encode(),
            b'{"type": "turn.appended", "tenant": "x"}',
            b"\xff\xfe not utf-8",
            orjson.dumps({"type": "correction.applied", "event_id": str(uuid.uuid4())}),
        ],
    )

    with running_worker(isolated, "--inbox", log_path=tmp_path / "worker.log"):
        await wait_until_formed(pool, [spoken.event_id], timeout_s=90)

        async def inbox_empty() -> bool:
            return await _kept_in(kafka.bootstrap, kafka.inbox_topic) == 0

        await wait_until(inbox_empty, timeout_s=30, what="the inbox deleting what it moved")

    episodes = await _read_all(kafka.bootstrap, kafka.episodes_topic)
    assert _event_ids(episodes) == [str(spoken.event_id)]
    beliefs = await list_beliefs(pool, tenant=isolated.tenant, principal="ana")
    assert {("has_name", "Ana"), ("lives_in", "Zürich")} <= {
        (b.relation, b.object) for b in beliefs
    }
    assert len([b for b in beliefs if b.relation == "lives_in"]) == 1

    letters = await _read_all(kafka.bootstrap, kafka.dlq_topic)
    reasons = sorted(headers["engram.reason"].decode() for _, headers in letters)
    assert reasons == ["contract_violation", "contract_violation", "not_utf8"]
    for value, headers in letters:
        assert value == b""  # the dead-letter topic is kept forever: no plaintext copy
        assert headers["engram.source.topic"] == kafka.inbox_topic.encode()
        assert len(headers["engram.source.sha256"]) == 64
    kept = await _read_all(kafka.bootstrap, kafka.inbox_topic)
    # Nothing it moved; at most the intake's own marker that closes a segment (no value).
    assert [v for v, headers in kept if not is_roll_marker(v, list(headers.items()))] == []


async def test_the_inbox_topic_is_created_with_bounded_retention(isolated: Isolated) -> None:
    kafka = isolated.kafka(inbox_retention_ms=120_000)
    await ensure_topics(kafka)
    admin = AIOKafkaAdminClient(bootstrap_servers=kafka.bootstrap)
    await admin.start()
    try:
        [response] = await admin.describe_configs(
            [ConfigResource(ConfigResourceType.TOPIC, kafka.inbox_topic)]
        )
    finally:
        await admin.close()
    [resource] = response.resources
    configs = {entry[0]: entry[1] for entry in resource[4]}
    assert configs["retention.ms"] == "120000"
    assert configs["segment.ms"] == str(kafka.inbox_segment_ms)  # closed soon, not hourly
    assert configs["file.delete.delay.ms"] == "1000"
    assert configs["message.timestamp.type"] == "LogAppendTime"
    assert configs["cleanup.policy"] == "delete"


class _FailOnce:
    """A sealer that fails once mid-transaction as a lost broker connection would, after the
    transaction has already sent some of the fetch's records."""

    def __init__(self, after: int) -> None:
        self.after = after
        self.calls = 0

    async def __call__(self, episode: InboxEpisode) -> LogEvent:
        self.calls += 1
        if self.calls == self.after:
            raise KafkaConnectionError("connection lost mid-transaction (injected)")
        return episode


async def test_a_transaction_that_fails_half_way_appends_each_turn_exactly_once(
    isolated: Isolated,
) -> None:
    kafka = isolated.kafka()
    await ensure_topics(kafka)
    turns = [turn(isolated.tenant, "bo", "p", f"I live in Cork {n}.", seq=n) for n in range(6)]
    await _publish_plain(
        kafka.bootstrap, kafka.inbox_topic, [t.model_dump_json().encode() for t in turns]
    )
    sealer = _FailOnce(after=4)
    intake = InboxIntake(kafka, seal=sealer)
    running = asyncio.create_task(intake.run())
    try:

        async def all_appended() -> bool:
            return len(await _read_all(kafka.bootstrap, kafka.episodes_topic)) >= len(turns)

        await wait_until(all_appended, timeout_s=60, what="every inbox turn appended")
    finally:
        intake.stop()
        await asyncio.wait_for(running, timeout=30)
    episodes = await _read_all(kafka.bootstrap, kafka.episodes_topic)
    assert sorted(_event_ids(episodes)) == sorted(str(t.event_id) for t in turns)
    assert sealer.calls > len(turns)  # the failed transaction's records were sealed again
    assert intake.appended == len(turns)


async def test_a_second_intake_fences_the_first(isolated: Isolated) -> None:
    kafka = isolated.kafka()
    await ensure_topics(kafka)
    first = InboxIntake(kafka)
    first_run = asyncio.create_task(first.run())
    opening = turn(isolated.tenant, "cy", "p", "I live in Oslo.", seq=0)
    await _publish_plain(kafka.bootstrap, kafka.inbox_topic, [opening.model_dump_json().encode()])

    async def appended(count: int) -> bool:
        return len(await _read_all(kafka.bootstrap, kafka.episodes_topic)) >= count

    await wait_until(lambda: appended(1), timeout_s=60, what="the first intake moving a turn")
    second = InboxIntake(kafka)
    second_run = asyncio.create_task(second.run())
    try:
        await wait_until(
            lambda: second.readiness()[0], timeout_s=60, what="the second intake assigned"
        )
        later = [turn(isolated.tenant, "cy", "p", f"I like tea {n}.", seq=n + 1) for n in range(6)]
        # every partition gets records, so whichever the first intake still holds gives it a
        # transaction to attempt — and be fenced in
        await _publish_plain(
            kafka.bootstrap,
            kafka.inbox_topic,
            [t.model_dump_json().encode() for t in later],
            spread_over=isolated.partitions,
        )
        with pytest.raises(InboxIntakeFenced, match="took over"):
            await asyncio.wait_for(first_run, timeout=60)
        await wait_until(lambda: appended(7), timeout_s=60, what="the second intake moving all")
    finally:
        second.stop()
        await asyncio.wait_for(second_run, timeout=30)
    episodes = await _read_all(kafka.bootstrap, kafka.episodes_topic)
    assert sorted(_event_ids(episodes)) == sorted(str(t.event_id) for t in [opening, *later])
