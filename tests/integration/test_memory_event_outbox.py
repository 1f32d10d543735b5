"""Memory events leave the outbox as record batches, but land where one ``send`` each would have
put them: a principal's events in its key's partition, in outbox order, each one's pending row
deleted once published (the outbox row stays)."""

from __future__ import annotations

import time
import uuid
from collections import defaultdict

import asyncpg
import orjson
import pytest
from aiokafka import AIOKafkaConsumer, AIOKafkaProducer

from engram.ingest.topics import ensure_topics
from engram.projections.beliefs.memory_events import DRAIN_LIMIT, QueuedPayloads, drain_outbox
from engram.projections.beliefs.projector import MEMORY_EVENT_BATCH_BYTES
from engram.schemas.common import principal_key
from tests.support.isolation import Isolated

pytestmark = pytest.mark.integration

PRINCIPALS = [f"p{i}" for i in range(7)]
EVENTS = DRAIN_LIMIT + 500  # two drains, and more than one record batch per partition


_QUEUE = """
WITH queued AS (
    INSERT INTO memory_event_outbox (event_id, tenant, principal, payload)
    VALUES ($1, $2, $3, $4::jsonb) RETURNING event_id, tenant, principal
)
INSERT INTO memory_event_pending (event_id, tenant, principal) SELECT * FROM queued
"""
"""What the store does for each event it queues: its outbox row, and its pending row."""


async def _pending(pool: asyncpg.Pool, tenant: str) -> int:
    count: int = await pool.fetchval(
        "SELECT count(*) FROM memory_event_pending WHERE tenant = $1", tenant
    )
    return count


async def _fill_outbox(pool: asyncpg.Pool, tenant: str) -> list[tuple[str, int]]:
    """(principal, sequence number within that principal) of every event, in outbox order."""
    rows: list[tuple[uuid.UUID, str, str, str]] = []
    seen: defaultdict[str, int] = defaultdict(int)
    for i in range(EVENTS):
        principal = PRINCIPALS[(i * 3) % len(PRINCIPALS)]
        payload = {"type": "memory.formed", "principal": principal, "n": seen[principal]}
        payload["padding"] = "x" * 400  # ~0.5 KB, as real events are
        rows.append((uuid.uuid4(), tenant, principal, orjson.dumps(payload).decode()))
        seen[principal] += 1
    await pool.executemany(_QUEUE, rows)
    return [(r[2], orjson.loads(r[3])["n"]) for r in rows]


async def _consume(
    bootstrap: str, topic: str, want: int
) -> list[tuple[int, bytes, dict[str, object]]]:
    consumer = AIOKafkaConsumer(
        topic, bootstrap_servers=bootstrap, auto_offset_reset="earliest", group_id=None
    )
    await consumer.start()
    found: list[tuple[int, bytes, dict[str, object]]] = []
    deadline = time.monotonic() + 60
    try:
        while len(found) < want and time.monotonic() < deadline:
            for records in (await consumer.getmany(timeout_ms=500)).values():
                found += [(r.partition, r.key, orjson.loads(r.value)) for r in records]
    finally:
        await consumer.stop()
    return found


async def test_batched_memory_events_keep_each_principals_partition_and_order(
    isolated: Isolated, pool: asyncpg.Pool
) -> None:
    kafka = isolated.kafka(partitions=3)
    await ensure_topics(kafka)
    topic = kafka.memory_events_topic
    expected = await _fill_outbox(pool, isolated.tenant)
    producer = AIOKafkaProducer(
        bootstrap_servers=kafka.bootstrap,
        enable_idempotence=True,
        acks="all",
        max_batch_size=MEMORY_EVENT_BATCH_BYTES // 16,  # several batches per partition a drain
    )
    await producer.start()
    try:
        published = [await drain_outbox(pool, producer, topic) for _ in range(3)]
        # Where the producer's own send puts each principal's key: the partition to match.
        probes = {
            p: (await (await producer.send(topic, b"{}", key=principal_key(isolated.tenant, p))))
            for p in PRINCIPALS
        }
    finally:
        await producer.stop()
    assert published == [DRAIN_LIMIT, EVENTS - DRAIN_LIMIT, 0]

    records = await _consume(kafka.bootstrap, topic, want=EVENTS + len(PRINCIPALS))
    events = [(part, body) for part, _, body in records if body]
    assert len(events) == EVENTS
    by_principal: dict[str, list[int]] = defaultdict(list)
    for partition, body in events:
        principal = str(body["principal"])
        assert partition == probes[principal].partition, principal
        by_principal[principal].append(int(str(body["n"])))
    for principal in PRINCIPALS:
        want = [n for p, n in expected if p == principal]
        assert by_principal[principal] == want, f"{principal}'s events out of outbox order"
    assert len({probe.partition for probe in probes.values()}) > 1, "spread over partitions"

    assert await _pending(pool, isolated.tenant) == 0
    kept = await pool.fetchval(
        "SELECT count(*) FROM memory_event_outbox WHERE tenant = $1", isolated.tenant
    )
    assert kept == EVENTS, "the outbox keeps every event it published"


async def test_a_drain_sends_the_queued_json_and_reads_back_only_what_it_lacks(
    isolated: Isolated, pool: asyncpg.Pool
) -> None:
    kafka = isolated.kafka(partitions=1)
    await ensure_topics(kafka)
    topic = kafka.memory_events_topic
    ids = [uuid.uuid4() for _ in range(4)]
    stored = [orjson.dumps({"type": "memory.formed", "n": n}).decode() for n in range(4)]
    await pool.executemany(
        _QUEUE, [(i, isolated.tenant, "ana", p) for i, p in zip(ids, stored, strict=True)]
    )
    queued = QueuedPayloads()
    # What this process committed, as it serialised it (the outbox row reads back as jsonb text,
    # with other spacing): events 1 and 3. Events 0 and 2 come from the outbox.
    queued.add(
        [(ids[1], '{"type":"memory.formed","n":1}'), (ids[3], '{"type":"memory.formed","n":3}')]
    )
    producer = AIOKafkaProducer(bootstrap_servers=kafka.bootstrap, enable_idempotence=True)
    await producer.start()
    try:
        assert await drain_outbox(pool, producer, topic, queued) == 4
    finally:
        await producer.stop()
    consumer = AIOKafkaConsumer(
        topic, bootstrap_servers=kafka.bootstrap, auto_offset_reset="earliest", group_id=None
    )
    await consumer.start()
    values: list[bytes] = []
    deadline = time.monotonic() + 60
    try:
        while len(values) < 4 and time.monotonic() < deadline:
            for records in (await consumer.getmany(timeout_ms=500)).values():
                values += [r.value for r in records]
    finally:
        await consumer.stop()
    assert values == [
        b'{"n": 0, "type": "memory.formed"}',
        b'{"type":"memory.formed","n":1}',
        b'{"n": 2, "type": "memory.formed"}',
        b'{"type":"memory.formed","n":3}',
    ], "in outbox order, each from the queue where it was queued, else read back"
    assert len(queued) == 0, "published events are forgotten"
    assert await _pending(pool, isolated.tenant) == 0


def test_queued_payloads_stay_bounded_and_the_outbox_keeps_what_they_drop() -> None:
    queued = QueuedPayloads()
    first = [(uuid.uuid4(), "{}") for _ in range(QueuedPayloads.LIMIT)]
    queued.add(first)
    assert len(queued) == QueuedPayloads.LIMIT
    later = (uuid.uuid4(), '{"later":1}')
    queued.add([later])
    assert len(queued) == 1, "full: what it held is read back from the outbox instead"
    assert queued.known([first[0][0], later[0]]) == {later[0]: '{"later":1}'}
