"""The index of messages on real Kafka and PostgreSQL: every message of every turn, with its
place in the log; read once however often the indexer restarts; rebuilt the same by replay;
and none of a deleted belief's messages or a forgotten principal's, whichever of the indexer
and the projector gets there first."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import asyncpg
import pytest

from engram.infra.settings import KafkaSettings
from engram.ingest.producer import EpisodeProducer
from engram.ingest.topics import ensure_topics
from engram.projections.beliefs.digest import drop_projections
from engram.projections.following import LogFollower
from engram.projections.messages.indexer import MessageIndex
from engram.projections.messages.reading import follow_messages
from engram.projections.messages.store import LogEntry, MessageKey, hide_messages
from engram.projections.reads.freshness import freshness
from engram.schemas.common import principal_hash
from engram.schemas.corrections import PrincipalForgotten
from tests.support.episodes import EPOCH, turn
from tests.support.http import first_ok, free_port
from tests.support.indexing import indexed_to_the_end
from tests.support.isolation import Isolated, running_engram

pytestmark = pytest.mark.integration

WAIT_S = 60


@asynccontextmanager
async def indexing(
    kafka: KafkaSettings, pool: asyncpg.Pool
) -> AsyncIterator[LogFollower[LogEntry]]:
    """A follower of the log with the index alone, running as a task for the block; stopped
    and awaited after it."""
    indexer = follow_messages(kafka, [MessageIndex(pool)])
    task = asyncio.create_task(indexer.run())
    try:
        yield indexer
    finally:
        indexer.stop()
        await task


async def rows(pool: asyncpg.Pool, tenant: str) -> list[tuple[object, ...]]:
    records = await pool.fetch(
        "SELECT principal, session, message_ordinal, role, author, content, occurred_at, "
        "source_partition, source_offset FROM message WHERE tenant = $1 "
        "ORDER BY source_offset, message_ordinal",
        tenant,
    )
    return [tuple(r) for r in records]


async def test_every_message_is_indexed_once_with_its_place_and_a_replay_rebuilds_it(
    isolated: Isolated, pool: asyncpg.Pool
) -> None:
    kafka = isolated.kafka(partitions=1)
    await ensure_topics(kafka)
    t = isolated.tenant
    turns = [
        turn(
            t,
            "ana",
            "p",
            "I brought a kimono back from Japan.",
            "Lovely!",
            roles=("user", "assistant"),
        ),
        turn(t, "ana", "p", "My café serves ramen now.", seq=1, session="s2"),
    ]
    async with EpisodeProducer(kafka) as producer:
        appended = await producer.publish_many(turns)
    async with indexing(kafka, pool):
        await indexed_to_the_end(kafka, pool, timeout_s=WAIT_S)
    first = await rows(pool, t)
    one, two = appended[0].offset, appended[1].offset
    assert first == [
        ("ana", "s1", 0, "user", None, "I brought a kimono back from Japan.", EPOCH, 0, one),
        ("ana", "s1", 1, "assistant", None, "Lovely!", EPOCH, 0, one),
        ("ana", "s2", 0, "user", None, "My café serves ramen now.", turns[1].occurred_at, 0, two),
    ]
    assert (
        await pool.fetchval(
            "SELECT count(*) FROM message WHERE tenant = $1 "
            "AND search_vector @@ plainto_tsquery('engram_english', 'cafe')",
            t,
        )
        == 1
    ), "searched in engram_english: accents do not matter"

    # A restart reads nothing twice; records read again from Kafka's position change nothing.
    async with indexing(kafka, pool):
        await indexed_to_the_end(kafka, pool, timeout_s=WAIT_S)
    assert await rows(pool, t) == first

    async with pool.acquire() as conn:
        await drop_projections(conn)
    assert await rows(pool, t) == []
    async with indexing(kafka, pool):
        await indexed_to_the_end(kafka, pool, timeout_s=WAIT_S)
    assert await rows(pool, t) == first


async def test_a_hidden_message_is_deleted_and_never_indexed_again(
    isolated: Isolated, pool: asyncpg.Pool
) -> None:
    kafka = isolated.kafka(partitions=1)
    await ensure_topics(kafka)
    t = isolated.tenant
    first = turn(t, "ana", "p", "I live in Zanzibar.", "Noted.", roles=("user", "assistant"))
    second = turn(t, "ana", "p", "Zanzibar is hot.", seq=1)
    later = turn(t, "ana", "p", "I keep bees.", seq=2)
    async with EpisodeProducer(kafka) as producer:
        await producer.publish_many([first, second])
    async with indexing(kafka, pool):
        await indexed_to_the_end(kafka, pool, timeout_s=WAIT_S)
    # The deletion names the first message (its evidence) and quotes "Zanzibar": the second,
    # which holds the quote, goes as well; the assistant's reply does not.
    async with pool.acquire() as conn, conn.transaction():
        await hide_messages(conn, [MessageKey(t, "ana", first.event_id, 0)], quotes=["Zanzibar"])
    assert [r[5] for r in await rows(pool, t)] == ["Noted."]

    # A replay (or an indexer that had not got there yet) leaves them out.
    await pool.execute("DELETE FROM projector_offset WHERE projector = 'messages'")
    async with EpisodeProducer(kafka) as producer:
        await producer.publish(later)
    async with indexing(kafka, pool):
        await indexed_to_the_end(kafka, pool, timeout_s=WAIT_S)
    assert [r[5] for r in await rows(pool, t)] == ["Noted.", "I keep bees."]
    assert await pool.fetchval("SELECT count(*) FROM message_hidden WHERE tenant = $1", t) == 2


async def test_a_forgotten_principal_leaves_the_index_and_stays_out(
    isolated: Isolated, pool: asyncpg.Pool
) -> None:
    kafka = isolated.kafka(partitions=1)
    await ensure_topics(kafka)
    t = isolated.tenant
    forget = PrincipalForgotten(
        event_id=uuid.uuid4(),
        tenant=t,
        principal="ana",
        project="p",
        session="s1",
        occurred_at=EPOCH,
    )
    async with EpisodeProducer(kafka) as producer:
        await producer.publish_many(
            [
                turn(t, "ana", "p", "I live in Lisbon."),
                turn(t, "bo", "p", "I live in Cork.", seq=1),
                forget,
            ]
        )
    async with indexing(kafka, pool):
        await indexed_to_the_end(kafka, pool, timeout_s=WAIT_S)
    assert [r[0] for r in await rows(pool, t)] == ["bo"], "the log's forgetting empties the index"

    # Once the projector has written the tombstone, nothing of theirs is indexed again.
    await pool.execute(
        "INSERT INTO principal_tombstone (principal_hash, event_id, forgotten_at) "
        "VALUES ($1, $2, now())",
        principal_hash(t, "ana"),
        forget.event_id,
    )
    async with EpisodeProducer(kafka) as producer:
        await producer.publish(turn(t, "ana", "p", "I live in Oslo.", seq=2))
    async with indexing(kafka, pool):
        await indexed_to_the_end(kafka, pool, timeout_s=WAIT_S)
    assert [r[0] for r in await rows(pool, t)] == ["bo"]


async def test_freshness_reports_how_far_the_index_has_read(
    isolated: Isolated, pool: asyncpg.Pool
) -> None:
    kafka = isolated.kafka(partitions=1)
    await ensure_topics(kafka)
    t = isolated.tenant
    async with EpisodeProducer(kafka) as producer:
        [appended] = await producer.publish_many([turn(t, "ana", "p", "I live in Lisbon.")])
    # The backlog is formation's: an entry as formation records the episode it read.
    await pool.execute(
        'INSERT INTO formation_backlog (topic, partition, "offset", tenant, project, episode_id, '
        "occurred_at, appended_at) VALUES ($1, 0, $2, $3, 'p', $4, now(), now())",
        kafka.episodes_topic,
        appended.offset,
        t,
        uuid.uuid4(),
    )
    before = await freshness(pool, tenant=t, project="p")
    assert (before.indexed_offset, before.index_lag_episodes) == (None, 1)
    async with indexing(kafka, pool):
        await indexed_to_the_end(kafka, pool, timeout_s=WAIT_S)
    after = await freshness(pool, tenant=t, project="p")
    assert (after.indexed_offset, after.index_lag_episodes) == (appended.offset, 0)


async def test_engram_indexer_runs_the_index_as_a_process_of_its_own(
    isolated: Isolated, pool: asyncpg.Pool, tmp_path: Path
) -> None:
    kafka = isolated.kafka(partitions=1)
    await ensure_topics(kafka)
    t = isolated.tenant
    async with EpisodeProducer(kafka) as producer:
        await producer.publish(turn(t, "ana", "p", "I keep bees."))
    port = free_port()
    env = isolated.env(partitions=1)
    env["ENGRAM_WORKER_HTTP_PORT"] = str(port)
    with running_engram(isolated, "indexer", log_path=tmp_path / "indexer.log", env=env):
        await indexed_to_the_end(kafka, pool, timeout_s=WAIT_S)
        base = f"http://127.0.0.1:{port}"
        assert (await first_ok(f"{base}/ready")).json() == {"ready": True, "reason": "ready"}
        metrics = (await first_ok(f"{base}/metrics")).text
    assert [r[5] for r in await rows(pool, t)] == ["I keep bees."]
    assert "engram_messages_indexed_total 1.0" in metrics
