"""The message index as a sink of the episodic log's follower: every message of the log into
the index (:mod:`engram.projections.messages.store`).

A stage of its own, beside formation and the belief projector: its own stored offsets
(``projector_offset``, projector ``messages``), so it never waits for formation and formation
never waits for it. The stored offsets are the truth — its follower seeks to them, and each
partition's batch is written with its offset in one transaction — so a replay into emptied
tables (or a new generation's schema) rebuilds the index from offset 0. In ``engram worker``
it shares one follower (one fetch, one opening per record) with the vectors
(:mod:`engram.projections.messages.embedding_follower`); ``engram indexer`` runs it alone, and
``engram rederive`` for a generation.
"""

from __future__ import annotations

import asyncpg

from engram.infra.metrics import MESSAGES_INDEXED
from engram.projections.following import Batch, BatchSink
from engram.projections.messages.store import INDEX_TRACKING, INDEXER, LogEntry, write_index


async def indexed_offsets(pool: asyncpg.Pool, topic: str) -> dict[int, int]:
    """The index's stored offset of each partition of ``topic`` (the next record to index)."""
    return await INDEX_TRACKING.stored_offsets(pool, topic)


class MessageIndex(BatchSink[LogEntry, None]):
    """Writes each batch's messages and forgettings into the index; ``written`` counts the
    messages read into it (written, or left out as hidden or a forgotten principal's)."""

    def __init__(self, pool: asyncpg.Pool) -> None:
        super().__init__(pool, INDEX_TRACKING, name=INDEXER)

    async def prepare(self, batch: Batch[LogEntry]) -> None:
        return None

    async def write(self, conn: asyncpg.Connection, batch: Batch[LogEntry], prepared: None) -> int:
        return await write_index(conn, batch.records)

    def committed(self, count: int) -> None:
        MESSAGES_INDEXED.inc(count)
