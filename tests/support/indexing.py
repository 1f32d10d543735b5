"""Waiting for the message indexer: its stored offsets at the end of the episodic log."""

from __future__ import annotations

import asyncio

import asyncpg

from generations.runtime import end_offsets
from infra.settings import KafkaSettings
from projections.message_indexer import MessageIndexer, indexed_offsets
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
    indexer = MessageIndexer(kafka, pool)
    task = asyncio.create_task(indexer.run())
    try:
        await indexed_to_the_end(kafka, pool, timeout_s=timeout_s)
    finally:
        indexer.stop()
        await task
