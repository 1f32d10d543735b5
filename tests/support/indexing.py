"""Waiting for the message index and the vectors: their stored offsets at the end
of the episodic log; what vectors of a principal remain."""

from __future__ import annotations

import asyncio

import asyncpg

from engram.generations.runtime import end_offsets
from engram.infra.settings import KafkaSettings
from engram.projections.messages.embeddings.e5 import DIMENSIONS, MODEL_NAME, RECIPE
from engram.projections.messages.embeddings.generation import EmbeddingGeneration
from engram.projections.messages.indexer import MessageIndex, indexed_offsets
from engram.projections.messages.reading import follow_messages
from engram.projections.messages.vectors import embedded_offsets
from tests.support.conditions import wait_until


async def indexed_to_the_end(kafka: KafkaSettings, pool: asyncpg.Pool, *, timeout_s: float) -> None:
    """Return once the indexer has read every record the log holds now."""
    ends = await end_offsets(kafka, kafka.episodes_topic)

    async def caught_up() -> bool:
        stored = await indexed_offsets(pool, kafka.episodes_topic)
        return all(stored.get(p, 0) >= end for p, end in ends.items() if end)

    await wait_until(caught_up, timeout_s=timeout_s, what="the index reaches the end of the log")


async def index_everything(kafka: KafkaSettings, pool: asyncpg.Pool, *, timeout_s: float) -> None:
    """Run a message indexer until it has read every record the log holds now, then stop it."""
    indexer = follow_messages(kafka, [MessageIndex(pool)])
    task = asyncio.create_task(indexer.run())
    try:
        await indexed_to_the_end(kafka, pool, timeout_s=timeout_s)
    finally:
        indexer.stop()
        await task


DEFAULT_GENERATION = EmbeddingGeneration(MODEL_NAME, DIMENSIONS, RECIPE).name
"""What a worker with the default settings embeds into."""


async def embedded_to_the_end(
    kafka: KafkaSettings,
    pool: asyncpg.Pool,
    generation: str = DEFAULT_GENERATION,
    *,
    timeout_s: float,
) -> None:
    """Return once the embedding follower has read every record the log holds now into
    ``generation`` (its stored offsets, never time)."""
    ends = await end_offsets(kafka, kafka.episodes_topic)

    async def caught_up() -> bool:
        stored = await embedded_offsets(pool, kafka.episodes_topic, generation)
        return all(stored.get(p, 0) >= end for p, end in ends.items() if end)

    await wait_until(caught_up, timeout_s=timeout_s, what="the follower reaches the end of the log")


async def vectors_of(pool: asyncpg.Pool, tenant: str, principal: str) -> list[bytes]:
    """Every vector kept of one principal (any generation, any kind)."""
    rows = await pool.fetch(
        "SELECT vector FROM embedding_vector WHERE tenant = $1 AND principal = $2",
        tenant,
        principal,
    )
    return [bytes(r["vector"]) for r in rows]


def vectors_in_dump(vectors: list[bytes], dump: str) -> list[bytes]:
    """The vectors a lower-cased ``pg_dump --data-only`` still holds (bytea prints as hex)."""
    return [v for v in vectors if v.hex() in dump]
