"""Defence in depth on real Kafka and PostgreSQL: what the doors would refuse, written straight
onto the topics, never stops the stream.

An episode with a NUL in a message, appended by a producer that skips the doors, is
dead-lettered by the formation stage with the field named, and the project's next turn forms. A
claims batch that PostgreSQL refuses (a NUL in a quote: ``invalid byte sequence for encoding
"UTF8": 0x00``, which used to crash the worker on every restart) is set aside by the projector
— its episode parked, its bytes dead-lettered with the reason — while the batches around it,
of the same principal and in the same chunk, project exactly as they do without it.
"""

from __future__ import annotations

import asyncio
import time
from datetime import UTC, datetime
from pathlib import Path

import asyncpg
import orjson
import pytest
from aiokafka import AIOKafkaConsumer, AIOKafkaProducer

from engram.infra.settings import KafkaSettings
from engram.ingest.producer import EpisodeProducer
from engram.ingest.topics import ensure_topics
from engram.projections.beliefs.digest import drop_projections, projection_digest
from engram.projections.beliefs.projector import BeliefProjector
from engram.projections.reads.queries import list_beliefs
from engram.schemas.claims import ClaimsBatchFormed
from engram.schemas.common import episode_key, principal_hash, principal_key
from engram.watermarks.backlog import BacklogEntry, list_parked, record_pending_many, watermark
from engram.watermarks.waiting import wait_until_formed
from tests.support.conditions import wait_until
from tests.support.databases import create_database, drop_database
from tests.support.episodes import turn
from tests.support.isolation import Isolated, new_prefix, running_worker
from tests.support.projecting import city_batches, publish_batches, run_count
from tests.support.services import Services

pytestmark = pytest.mark.integration


async def _dead_letters(bootstrap: str, topic: str, want: int) -> list[dict[str, str]]:
    consumer = AIOKafkaConsumer(topic, bootstrap_servers=bootstrap, auto_offset_reset="earliest")
    await consumer.start()
    found: list[dict[str, str]] = []
    deadline = time.monotonic() + 60
    try:
        while len(found) < want and time.monotonic() < deadline:
            for records in (await consumer.getmany(timeout_ms=500)).values():
                found += [{k: v.decode() for k, v in r.headers} for r in records]
    finally:
        await consumer.stop()
    return found


async def test_a_nul_episode_written_to_the_log_is_dead_lettered_and_the_next_turn_forms(
    isolated: Isolated, pool: asyncpg.Pool, tmp_path: Path
) -> None:
    kafka = isolated.kafka(partitions=1)
    await ensure_topics(kafka)
    t = isolated.tenant
    poison = turn(t, "ana", "p", "I live in Oslo.", seq=0).model_dump(mode="json")
    poison["messages"][0]["content"] = "I live in Os\u0000lo."
    author = turn(t, "ana", "p", "Hi.", seq=1).model_dump(mode="json")
    author["messages"][0].update(role="assistant", author="B\u0000t")
    good = turn(t, "ana", "p", "I live in Lisbon.", seq=2)
    async with EpisodeProducer(kafka) as producer:
        for raw in (poison, author):
            await producer.publish_raw(episode_key(t, "p"), orjson.dumps(raw))
        appended = await producer.publish(good)

    with running_worker(isolated, log_path=tmp_path / "worker.log") as worker:
        await wait_until_formed(pool, [good.event_id], timeout_s=90)
        assert worker.poll() is None, "the worker kept running"

    beliefs = await list_beliefs(pool, tenant=t, principal="ana")
    assert [(b.relation, b.object) for b in beliefs] == [("lives_in", "Lisbon")]
    letters = await _dead_letters(kafka.bootstrap, kafka.dlq_topic, want=2)
    assert [h["engram.reason"] for h in letters] == ["contract_violation"] * 2
    assert "messages.0.content" in letters[0]["engram.detail"]
    assert "messages.0.author" in letters[1]["engram.detail"]
    assert all("U+0000" in h["engram.detail"] for h in letters)
    assert [int(h["engram.source.offset"]) for h in letters] == [0, 1]
    mark = await watermark(pool, tenant=t, project="p")
    assert mark.formed_offset == appended.offset == 2


def _poisoned(batch: ClaimsBatchFormed) -> bytes:
    """The batch's bytes with a NUL inside its quote and object: valid JSON, a valid batch by
    the claims contract, and text PostgreSQL refuses."""
    raw = orjson.dumps(batch.model_dump(mode="json"))
    assert b"Lisbon" in raw
    return raw.replace(b"Lisbon", b"Lis\\u0000bon")


async def _project_until(
    kafka_settings: KafkaSettings, pool: asyncpg.Pool, runs: int
) -> BeliefProjector:
    """A projector (chunks of up to 500 records, so the poison shares one with good batches)
    run until ``runs`` runs are applied and one batch is set aside."""
    projector = BeliefProjector(kafka_settings, pool)
    task = asyncio.create_task(projector.run())

    async def done() -> bool:
        if task.done():
            task.result()
        return projector.set_aside >= 1 and await run_count(pool) >= runs

    try:
        await wait_until(done, timeout_s=90, what="good batches applied, the poison set aside")
    finally:
        projector.stop()
        await task
    return projector


async def test_a_batch_postgresql_refuses_is_set_aside_and_the_rest_project_as_without_it(
    isolated: Isolated, services: Services, pool: asyncpg.Pool
) -> None:
    kafka = isolated.kafka(partitions=1)
    await ensure_topics(kafka)
    t = isolated.tenant
    batches = city_batches(t, 12)
    poison_at = next(i for i, b in enumerate(batches) if b"Lisbon" in orjson.dumps(b.model_dump()))
    poison = batches[poison_at]
    good = [b for i, b in enumerate(batches) if i != poison_at]
    entries = [
        BacklogEntry(
            b.source.topic,
            b.source.partition,
            b.source.offset,
            b.tenant,
            b.project,
            b.episode_id,
            b.occurred_at,
            datetime.now(UTC),
            principal_hash(b.tenant, b.principal),
            b.session,
        )
        for b in batches
    ]
    await record_pending_many(pool, entries)
    producer = AIOKafkaProducer(bootstrap_servers=kafka.bootstrap, enable_idempotence=True)
    await producer.start()
    try:
        for index, batch in enumerate(batches):
            value = (
                _poisoned(batch)
                if index == poison_at
                else orjson.dumps(batch.model_dump(mode="json"))
            )
            key = principal_key(batch.tenant, batch.principal)
            await producer.send_and_wait(kafka.claims_topic, value, key=key)
    finally:
        await producer.stop()

    projector = await _project_until(kafka, pool, runs=len(good))
    assert projector.set_aside == 1
    assert await run_count(pool) == len(good), "every other batch applied, none twice"
    [parked] = await list_parked(pool, tenant=t, project=poison.project)
    assert (parked.offset, parked.failure_kind) == (poison.source.offset, "unprojectable")
    [letter] = await _dead_letters(kafka.bootstrap, kafka.dlq_topic, want=1)
    assert letter["engram.reason"] == "unprojectable"
    assert letter["engram.source.topic"] == kafka.claims_topic
    assert int(letter["engram.source.offset"]) == poison_at
    assert int(letter["engram.episode.offset"]) == poison.source.offset
    assert "SQLSTATE 22021" in letter["engram.detail"] and "Lis" not in letter["engram.detail"]

    # A restart reads from the stored offset: nothing is set aside or applied twice.
    again = BeliefProjector(kafka, pool)
    task = asyncio.create_task(again.run())

    async def positioned() -> bool:
        return again.readiness()[0]

    await wait_until(positioned, timeout_s=60, what="the second projector positioned")
    again.stop()
    await task
    assert again.set_aside == 0 and await run_count(pool) == len(good)

    # Replay: the projection dropped and the topic read again from the start sets the same
    # batch aside and projects the rest to the same digest.
    projected = await projection_digest(pool)
    async with pool.acquire() as conn:
        await drop_projections(conn)
    replayed = await _project_until(kafka, pool, runs=len(good))
    assert replayed.set_aside == 1 and await projection_digest(pool) == projected

    # The projection equals one made from the good batches alone.
    name = f"engram_{new_prefix()}"
    clean_url = await create_database(services.database_url, name)
    clean = await asyncpg.create_pool(clean_url, min_size=1, max_size=4)
    assert clean is not None
    try:
        clean_kafka = isolated.kafka(
            partitions=1,
            claims_topic=f"{isolated.prefix}.claims-clean",
            group_id=f"{isolated.prefix}-clean",
        )
        await ensure_topics(clean_kafka)
        await publish_batches(clean_kafka, good)
        reference = BeliefProjector(clean_kafka, clean)
        task = asyncio.create_task(reference.run())

        async def applied() -> bool:
            if task.done():
                task.result()
            return await run_count(clean) >= len(good)

        try:
            await wait_until(applied, timeout_s=90, what="the clean projection")
        finally:
            reference.stop()
            await task
        assert await projection_digest(pool) == await projection_digest(clean)
    finally:
        await clean.close()
        await drop_database(services.database_url, name)
    assert not await pool.fetchval(
        "SELECT count(*) FROM consolidation_run WHERE run_id = $1", poison.batch_id
    )
