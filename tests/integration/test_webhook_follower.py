"""The notifier's follower on the real broker: memory events on the topic become owed
deliveries, an undecodable record is passed over, and a restart resumes from the stored
offsets; the projector queues ``principal.forgotten`` and drops what was owed for them."""

from __future__ import annotations

import asyncio
import contextlib
import uuid
from collections.abc import AsyncIterator, Sequence

import asyncpg
import orjson
import pytest
from aiokafka import AIOKafkaProducer

from engram.formation.corrections import form_correction
from engram.formation.policy import FormationPolicy
from engram.infra.settings import KafkaSettings
from engram.ingest.topics import ensure_topics
from engram.projections.notifying import NOTIFIER_TRACKING, follow_memory_events
from engram.schemas.claims import SourcePosition
from engram.schemas.common import principal_hash, principal_key
from engram.schemas.corrections import PrincipalForgotten
from engram.schemas.memory_events import MemoryChanged, PrincipalErased, decode_memory_event
from tests.support.conditions import wait_until
from tests.support.episodes import EPOCH, turn
from tests.support.isolation import Isolated
from tests.support.notifying import add_endpoint, changed, new_vault, owe
from tests.support.projecting import (
    batch_of,
    claim,
    project_all,
    publish_batches,
    run_projector_until,
)

pytestmark = pytest.mark.integration


async def _publish(kafka: KafkaSettings, values: Sequence[bytes]) -> None:
    producer = AIOKafkaProducer(bootstrap_servers=kafka.bootstrap)
    await producer.start()
    try:
        for value in values:
            await producer.send_and_wait(
                kafka.memory_events_topic, value, key=principal_key("t", "ana"), partition=0
            )
    finally:
        await producer.stop()


@contextlib.asynccontextmanager
async def _following(kafka: KafkaSettings, pool: asyncpg.Pool) -> AsyncIterator[None]:
    follower = follow_memory_events(kafka, pool)
    task = asyncio.create_task(follower.run())
    try:
        yield
    finally:
        follower.stop()
        await task


async def _stored(pool: asyncpg.Pool) -> int:
    stored = await pool.fetchval(
        "SELECT coalesce(max(next_offset), 0) FROM public.projector_offset WHERE projector = $1",
        NOTIFIER_TRACKING.projector,
    )
    return int(stored)


def _json(event: MemoryChanged) -> bytes:
    return event.model_dump_json().encode()


async def test_the_follower_owes_what_the_topic_says_and_resumes_after_what_it_wrote(
    isolated: Isolated, pool: asyncpg.Pool
) -> None:
    kafka = isolated.kafka(partitions=1)
    await ensure_topics(kafka)
    vault = new_vault()
    await add_endpoint(pool, vault, "http://127.0.0.1:9/hook")
    await _publish(kafka, [_json(changed(1)), b'{"not": "an event"}', _json(changed(2))])
    async with _following(kafka, pool):
        await wait_until(lambda: _at(pool, 3), timeout_s=60, what="three records read")
    assert await pool.fetchval("SELECT count(*) FROM webhook_delivery") == 2
    await _publish(kafka, [_json(changed(3)), _json(changed(1))])  # a new one, and a repeat
    async with _following(kafka, pool):
        await wait_until(lambda: _at(pool, 5), timeout_s=60, what="resumed to the end")
    ids = [
        r["event_id"]
        for r in await pool.fetch("SELECT event_id FROM webhook_delivery ORDER BY sequence")
    ]
    assert ids == [changed(n).event_id for n in (1, 2, 3)]


async def _at(pool: asyncpg.Pool, offset: int) -> bool:
    return await _stored(pool) >= offset


async def test_a_forgetting_drops_what_is_owed_and_queues_principal_forgotten(
    isolated: Isolated, pool: asyncpg.Pool
) -> None:
    kafka = isolated.kafka(partitions=1)
    await ensure_topics(kafka)
    t = isolated.tenant
    vault = new_vault()
    await add_endpoint(pool, vault, "http://127.0.0.1:9/hook", tenant=t)
    said = turn(t, "ana", "garden", "I live in Lisbon.")
    await project_all(
        kafka, pool, [batch_of(said, claim("I", "lives_in", "Lisbon", "I live in Lisbon"))]
    )
    queued = [
        decode_memory_event(
            orjson.dumps(r["payload"]) if not isinstance(r["payload"], str) else r["payload"]
        )
        for r in await pool.fetch("SELECT payload FROM memory_event_outbox WHERE tenant = $1", t)
    ]
    assert [(e.type, getattr(e, "project", None)) for e in queued] == [("memory.formed", "garden")]
    assert await owe(pool, [changed(1, tenant=t)]) == 1
    forget = PrincipalForgotten(
        event_id=uuid.uuid4(), tenant=t, principal="ana", project="garden", session="s1",
        occurred_at=EPOCH,
    )  # fmt: skip
    source = SourcePosition(topic="episodes", partition=0, offset=1)
    await publish_batches(kafka, [form_correction(forget, FormationPolicy(), source=source)])
    await run_projector_until(kafka, pool, count=1)  # from its stored offset: the forgetting
    assert await pool.fetchval("SELECT count(*) FROM webhook_delivery") == 0
    rows = await pool.fetch(
        "SELECT principal, payload FROM memory_event_outbox WHERE tenant = $1", t
    )
    [notice] = [decode_memory_event(r["payload"]) for r in rows]
    assert isinstance(notice, PrincipalErased)
    assert notice.principal_hash == principal_hash(t, "ana") == rows[0]["principal"]
    # it names no record of the log: the forgetting's record names her pseudonym
    assert notice.schema_version == 2 and notice.episode_id is None
    assert notice.occurred_at == EPOCH.replace(hour=0, minute=0, second=0, microsecond=0)
