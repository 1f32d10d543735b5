"""The embedding follower on real Kafka and PostgreSQL: the log's messages embedded into a
generation built by replay and then followed live, its own watermark in freshness, and no
vector of a hidden message or a forgotten principal."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from pathlib import Path

import asyncpg
import pytest

from engram.generations.runtime import end_offsets
from engram.infra.settings import KafkaSettings
from engram.ingest.producer import EpisodeProducer
from engram.ingest.topics import ensure_topics
from engram.projections.following import LogFollower
from engram.projections.messages.embedding_follower import MessageVectors
from engram.projections.messages.embeddings import store
from engram.projections.messages.embeddings.embedder import (
    EmbeddingUnavailable,
    InputType,
    Vectors,
)
from engram.projections.messages.embeddings.local import WordLlamaEmbedder
from engram.projections.messages.reading import follow_messages
from engram.projections.messages.store import LogEntry, MessageKey, hide_messages
from engram.projections.messages.vectors import embedded_offsets, message_of_item
from engram.projections.reads.freshness import freshness
from engram.schemas.common import principal_hash
from engram.schemas.corrections import PrincipalForgotten
from engram.watermarks.waiting import wait_for_watermarks
from tests.support.conditions import wait_until
from tests.support.episodes import EPOCH, turn
from tests.support.http import first_ok, free_port
from tests.support.indexing import indexed_to_the_end
from tests.support.isolation import Isolated, running_engram, running_worker

pytestmark = pytest.mark.integration

WAIT_S = 60
EMBEDDER = WordLlamaEmbedder(64)
GENERATION = "wordllama-l2_supercat/64/content-words-v1"


@asynccontextmanager
async def following(
    kafka: KafkaSettings, pool: asyncpg.Pool
) -> AsyncIterator[LogFollower[LogEntry]]:
    """A follower of the log with the vectors alone, running as a task for the block; stopped
    and awaited after it."""
    follower = follow_messages(kafka, [MessageVectors(pool, EMBEDDER)])
    task = asyncio.create_task(follower.run())
    try:
        yield follower
    finally:
        follower.stop()
        await task


async def embedded_to_the_end(
    kafka: KafkaSettings, pool: asyncpg.Pool, generation: str = GENERATION
) -> None:
    """Wait on the follower's stored offsets, never on time."""
    ends = await end_offsets(kafka, kafka.episodes_topic)

    async def caught_up() -> bool:
        stored = await embedded_offsets(pool, kafka.episodes_topic, generation)
        return all(stored.get(p, 0) >= end for p, end in ends.items() if end)

    await wait_until(caught_up, timeout_s=WAIT_S, what="the follower reaches the end of the log")


async def vectors(pool: asyncpg.Pool, tenant: str) -> list[tuple[str, uuid.UUID, int]]:
    rows = await pool.fetch(
        "SELECT principal, item_id FROM embedding_vector WHERE tenant = $1 AND kind = 'message' "
        "AND generation = $2 ORDER BY principal, item_id",
        tenant,
        GENERATION,
    )
    return sorted((r["principal"], *message_of_item(r["item_id"])) for r in rows)


async def test_the_log_is_embedded_by_replay_then_followed_live_and_the_generation_activated(
    isolated: Isolated, pool: asyncpg.Pool
) -> None:
    kafka = isolated.kafka(partitions=1)
    await ensure_topics(kafka)
    t = isolated.tenant
    first = turn(
        t, "ana", "p", "I adopted a small grey kitten.", "Cute!", roles=("user", "assistant")
    )
    async with EpisodeProducer(kafka) as producer:
        [appended] = await producer.publish_many([first])
    # Formation's backlog entry for the episode, as freshness reads it.
    await pool.execute(
        'INSERT INTO formation_backlog (topic, partition, "offset", tenant, project, episode_id, '
        "occurred_at, appended_at) VALUES ($1, 0, $2, $3, 'p', $4, now(), now())",
        kafka.episodes_topic,
        appended.offset,
        t,
        first.event_id,
    )
    assert (await freshness(pool, tenant=t, project="p")).embedding_generation is None

    async with following(kafka, pool):

        async def active() -> bool:
            async with pool.acquire() as conn:
                row = await store.get(conn, GENERATION)
            return row is not None and row.status == "active"

        await wait_until(active, timeout_s=WAIT_S, what="the generation is built and activated")
        assert await vectors(pool, t) == [("ana", first.event_id, 0), ("ana", first.event_id, 1)]
        fresh = await freshness(pool, tenant=t, project="p")
        assert (fresh.embedding_generation, fresh.embedded_offset) == (GENERATION, appended.offset)
        assert fresh.embedding_lag_episodes == 0

        # Followed live: a turn published while it runs gets its vector.
        later = turn(t, "bo", "p", "My dog chews shoes.", seq=1)
        async with EpisodeProducer(kafka) as producer:
            await producer.publish(later)
        await embedded_to_the_end(kafka, pool)
        assert ("bo", later.event_id, 0) in await vectors(pool, t)

    # A question by meaning finds the kitten among ana's vectors, in the active generation.
    async with pool.acquire() as conn:
        question = await EMBEDDER.embed(["do I have a pet?"])
        found = await store.search(conn, t, "ana", "message", question[0])
    assert found.generation == GENERATION
    assert message_of_item(found.hits[0].item_id) == (first.event_id, 0)

    # A restart reads nothing twice and changes nothing.
    before = await pool.fetch("SELECT item_id, vector FROM embedding_vector ORDER BY item_id")
    async with following(kafka, pool):
        await embedded_to_the_end(kafka, pool)
    assert (
        await pool.fetch("SELECT item_id, vector FROM embedding_vector ORDER BY item_id") == before
    )


async def test_a_hidden_message_loses_its_vector_and_a_replay_does_not_embed_it_again(
    isolated: Isolated, pool: asyncpg.Pool
) -> None:
    kafka = isolated.kafka(partitions=1)
    await ensure_topics(kafka)
    t = isolated.tenant
    first = turn(t, "ana", "p", "I live in Zanzibar.", "Noted.", roles=("user", "assistant"))
    async with EpisodeProducer(kafka) as producer:
        await producer.publish(first)
    async with following(kafka, pool):
        await embedded_to_the_end(kafka, pool)
    assert len(await vectors(pool, t)) == 2
    # What a belief's deletion does: its message leaves the index, and its vector goes too.
    async with pool.acquire() as conn, conn.transaction():
        await hide_messages(conn, [MessageKey(t, "ana", first.event_id, 0)])
    assert await vectors(pool, t) == [("ana", first.event_id, 1)]

    await pool.execute("DELETE FROM projector_offset WHERE projector LIKE 'embeddings/%'")
    async with following(kafka, pool):
        await embedded_to_the_end(kafka, pool)
    assert await vectors(pool, t) == [("ana", first.event_id, 1)], "hidden stays unembedded"


async def test_an_event_appended_twice_in_one_fetch_is_embedded_once(
    isolated: Isolated, pool: asyncpg.Pool
) -> None:
    """A retried publish puts the same event on the log twice, back to back: the follower reads
    both in one fetch and writes the message's vector once (it crashed the worker before)."""
    kafka = isolated.kafka(partitions=1)
    await ensure_topics(kafka)
    t = isolated.tenant
    twice = turn(t, "ana", "p", "I live in Zanzibar.")
    async with EpisodeProducer(kafka) as producer:
        await producer.publish_many([twice, twice])
    async with following(kafka, pool):
        await embedded_to_the_end(kafka, pool)
    assert await vectors(pool, t) == [("ana", twice.event_id, 0)]


async def test_a_forgotten_principal_loses_every_vector_and_gets_no_new_one(
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
            [turn(t, "ana", "p", "I live in Lisbon."), turn(t, "bo", "p", "I live in Cork.", seq=1)]
        )
    async with following(kafka, pool):
        await embedded_to_the_end(kafka, pool)
        assert {p for p, *_ in await vectors(pool, t)} == {"ana", "bo"}
        async with EpisodeProducer(kafka) as producer:
            await producer.publish(forget)
        await embedded_to_the_end(kafka, pool)
    assert {p for p, *_ in await vectors(pool, t)} == {"bo"}, "the log's forgetting empties them"

    await pool.execute(
        "INSERT INTO principal_tombstone (principal_hash, event_id, forgotten_at) "
        "VALUES ($1, $2, now())",
        principal_hash(t, "ana"),
        forget.event_id,
    )
    async with EpisodeProducer(kafka) as producer:
        await producer.publish(turn(t, "ana", "p", "I live in Oslo.", seq=2))
    async with following(kafka, pool):
        await embedded_to_the_end(kafka, pool)
    assert {p for p, *_ in await vectors(pool, t)} == {"bo"}


async def test_engram_embedder_runs_the_follower_as_a_process_of_its_own(
    isolated: Isolated, pool: asyncpg.Pool, tmp_path: Path
) -> None:
    kafka = isolated.kafka(partitions=1)
    await ensure_topics(kafka)
    t = isolated.tenant
    said = turn(t, "ana", "p", "I keep bees.")
    async with EpisodeProducer(kafka) as producer:
        await producer.publish(said)
    port = free_port()
    env = isolated.env(partitions=1)
    env["ENGRAM_WORKER_HTTP_PORT"] = str(port)
    env["ENGRAM_EMBEDDING_LOCAL_MODEL"] = "wordllama"
    env["ENGRAM_EMBEDDING_DIMENSIONS"] = "64"
    with running_engram(isolated, "embedder", log_path=tmp_path / "embedder.log", env=env):
        await embedded_to_the_end(kafka, pool)
        base = f"http://127.0.0.1:{port}"
        assert (await first_ok(f"{base}/ready")).json() == {"ready": True, "reason": "ready"}
        metrics = (await first_ok(f"{base}/metrics")).text
    assert await vectors(pool, t) == [("ana", said.event_id, 0)]
    assert "engram_messages_embedded_total 1.0" in metrics


class FailsFirst:
    """The local model behind an endpoint that is down for its first ``failures`` calls."""

    def __init__(self, failures: int) -> None:
        self.failures = failures
        self.model = EMBEDDER.model

    async def embed(self, texts: Sequence[str], input_type: InputType = "document") -> Vectors:
        if self.failures > 0:
            self.failures -= 1
            raise EmbeddingUnavailable("the endpoint is down")
        return await EMBEDDER.embed(texts, input_type)


async def test_an_embedder_outage_is_waited_out_and_nothing_is_lost(
    isolated: Isolated, pool: asyncpg.Pool
) -> None:
    kafka = isolated.kafka(partitions=1)
    await ensure_topics(kafka)
    t = isolated.tenant
    said = turn(t, "ana", "p", "I keep bees.")
    async with EpisodeProducer(kafka) as producer:
        await producer.publish(said)
    sink = MessageVectors(pool, FailsFirst(2))
    follower = follow_messages(kafka, [sink])
    task = asyncio.create_task(follower.run())
    try:
        await embedded_to_the_end(kafka, pool)
    finally:
        follower.stop()
        await task
    assert sink.outages == 2
    assert await vectors(pool, t) == [("ana", said.event_id, 0)]


async def test_formation_and_the_index_never_wait_for_an_embedder_that_is_down(
    isolated: Isolated, pool: asyncpg.Pool, tmp_path: Path
) -> None:
    """A worker whose embeddings endpoint refuses every connection still forms and indexes
    everything; only the embedding generation stays behind (building, nothing active)."""
    kafka = isolated.kafka(partitions=1)
    await ensure_topics(kafka)
    t = isolated.tenant
    down = f"http://127.0.0.1:{free_port()}"
    env = isolated.env(partitions=1)
    env.update(
        ENGRAM_EMBEDDING_PROVIDER="openai",
        ENGRAM_EMBEDDING_ENDPOINT=f"{down}/v1",
        ENGRAM_EMBEDDING_MODEL="nothing-answers",
        ENGRAM_EMBEDDING_DIMENSIONS="8",
        ENGRAM_EMBEDDING_ALLOWLIST=f'["{down}"]',
        ENGRAM_EMBEDDING_MAX_ATTEMPTS="1",
    )
    with running_worker(isolated, log_path=tmp_path / "worker.log", env=env):
        async with EpisodeProducer(kafka) as producer:
            positions = await producer.publish_many(
                [
                    turn(t, "ana", "p", "I live in Lisbon."),
                    turn(t, "ana", "p", "I keep bees.", seq=1),
                ]
            )
        await wait_for_watermarks(pool, positions, timeout_s=WAIT_S)
        await indexed_to_the_end(kafka, pool, timeout_s=WAIT_S)
        fresh = await freshness(pool, tenant=t, project="p")
        assert fresh.lag_episodes == fresh.index_lag_episodes == 0
        assert fresh.embedding_generation is None

        async def registered() -> bool:  # by the worker's embedder child, once it has started
            async with pool.acquire() as conn:
                return bool(await store.list_generations(conn))

        await wait_until(registered, timeout_s=WAIT_S, what="the embedder registers its generation")
        async with pool.acquire() as conn:
            [generation] = await store.list_generations(conn)
        assert (generation.model, generation.status) == ("nothing-answers", "building")
        assert await pool.fetchval("SELECT count(*) FROM embedding_vector") == 0
        log = tmp_path / "worker.log"
        await wait_until(
            lambda: "embedder.failed" in log.read_text(errors="replace"),
            timeout_s=WAIT_S,
            what="the follower reports the endpoint down",
        )
