"""Bad input never stops the stream: poison records go to the dead-letter topic with their
reason and source position, and the turns after them still form."""

from __future__ import annotations

import json
import time
from pathlib import Path

import asyncpg
import pytest
from aiokafka import AIOKafkaConsumer

from engram.ingest.producer import EpisodeProducer
from engram.ingest.topics import ensure_topics
from engram.projections.reads.queries import list_beliefs
from engram.schemas.common import episode_key
from engram.watermarks.waiting import wait_until_formed
from tests.support.episodes import turn
from tests.support.isolation import Isolated, running_worker

pytestmark = pytest.mark.integration


async def _dead_letters(bootstrap: str, topic: str, want: int) -> list[dict[str, bytes]]:
    consumer = AIOKafkaConsumer(topic, bootstrap_servers=bootstrap, auto_offset_reset="earliest")
    await consumer.start()
    found: list[dict[str, bytes]] = []
    deadline = time.monotonic() + 60
    try:
        while len(found) < want and time.monotonic() < deadline:
            for records in (await consumer.getmany(timeout_ms=500)).values():
                found += [dict(record.headers) for record in records]
    finally:
        await consumer.stop()
    return found


async def test_poison_records_are_dead_lettered_and_the_next_turn_still_forms(
    isolated: Isolated, pool: asyncpg.Pool, tmp_path: Path
) -> None:
    kafka = isolated.kafka(partitions=1)
    await ensure_topics(kafka)
    key = episode_key(isolated.tenant, "p")
    good = turn(isolated.tenant, "ana", "p", "I live in Lisbon.", seq=1)
    async with EpisodeProducer(kafka) as producer:
        await producer.publish_raw(key, b"{not json")
        await producer.publish_raw(key, b"\xff\xfe invalid utf-8")
        await producer.publish_raw(key, b'{"type": "turn.appended", "tenant": "x"}')
        await producer.publish_raw(key, b'{"pad": "' + b"x" * (kafka.max_event_bytes + 10) + b'"}')
        # Types the contract does not have: pydantic's lax mode would read "0" as 0 and a
        # number as a Unix time; the worker refuses both, naming the field.
        for spoiled in ({"ordinal": "0"}, {"occurred_at": 1790000000}):
            body = turn(isolated.tenant, "ana", "p", "I live in Oslo.", seq=9).model_dump(
                mode="json"
            )
            if "ordinal" in spoiled:
                body["messages"][0].update(spoiled)
            else:
                body.update(spoiled)
            await producer.publish_raw(key, json.dumps(body).encode())
        appended = await producer.publish(good)

    with running_worker(isolated, log_path=tmp_path / "worker.log"):
        await wait_until_formed(pool, [good.event_id], timeout_s=90)

    beliefs = await list_beliefs(pool, tenant=isolated.tenant, principal="ana")
    assert [(b.relation, b.object) for b in beliefs] == [("lives_in", "Lisbon")]
    letters = await _dead_letters(kafka.bootstrap, kafka.dlq_topic, want=6)
    reasons = [h["engram.reason"].decode() for h in letters]
    assert (
        reasons
        == ["not_json", "not_utf8", "contract_violation", "oversized"] + ["contract_violation"] * 2
    )
    details = [h["engram.detail"].decode() for h in letters[-2:]]
    assert details[0].startswith("turn.appended.messages.0.ordinal: Input should be a valid int")
    assert details[1].startswith("turn.appended.occurred_at: must be an RFC 3339 date-time")
    offsets = [int(h["engram.source.offset"]) for h in letters]
    assert offsets == sorted(offsets) and offsets[-1] < appended.offset
    assert all(h["engram.source.topic"].decode() == kafka.episodes_topic for h in letters)
