"""The message vectors as a sink of the episodic log's follower: every message of the log
embedded into one embedding generation (:mod:`engram.projections.messages.vectors`).

Off the formation path, like the index: its own stored offsets (``projector_offset``,
projector ``embeddings/<generation>``), so formation and the projector never wait for it and
its lag is its own (freshness reports it as ``embedded_offset`` / ``embedding_lag_episodes``).
Its follower seeks to the stored offsets; a generation it has never written starts at offset
0, which is how a generation is **built by replay** and then **followed live** by the same
sink. Embedding happens before the transaction (no connection is held across a model call);
the vectors and the offset are then written in one transaction per partition's batch. In
``engram worker`` it shares one follower with the index (one fetch and one opening per
record): an embedder that fails rests this sink alone, and the index goes on; ``engram
embedder`` runs it alone.

The generation is the one the settings name (model, size and the default text recipe). It is
registered ``building``; once every partition's stored offset has reached the log's end the
sink marks it ``built`` and, if no generation is active, activates it (atomically,
:func:`engram.projections.messages.embeddings.store.activate`). Switching models is therefore: configure the new one, let
it build, activate it; the previously active generation is not followed meanwhile (its lag
grows and freshness shows it).
"""

from __future__ import annotations

from collections.abc import Set

import asyncpg
import structlog

from engram.infra.metrics import MESSAGES_EMBEDDED
from engram.projections.following import Batch, BatchSink, Positions
from engram.projections.messages.embeddings import store
from engram.projections.messages.embeddings.embedder import Embedder, EmbeddingFailure, Vectors
from engram.projections.messages.embeddings.generation import EmbeddingGeneration
from engram.projections.messages.store import LogEntry, MessageKey
from engram.projections.messages.vectors import (
    embed_entries,
    vectors_tracking,
    write_entry_vectors,
)

log = structlog.get_logger(__name__)

EMBEDDINGS = "embeddings"
"""The vectors' sink name (its consumer group's suffix when it follows the log alone)."""


class MessageVectors(BatchSink[LogEntry, dict[MessageKey, Vectors]]):
    """Embeds each batch's messages into one generation; ``written`` counts the messages read
    (embedded and written, or left out as hidden or a forgotten principal's). An embedder
    that fails (:class:`EmbeddingFailure`) rests the sink, to be handed the same records
    again: it only makes the vectors lag (freshness shows it)."""

    waits_out = (EmbeddingFailure,)

    def __init__(
        self, pool: asyncpg.Pool, embedder: Embedder, roles: Set[str] | None = None
    ) -> None:
        self.generation = EmbeddingGeneration.of(embedder.model)
        super().__init__(pool, vectors_tracking(self.generation.name), name=EMBEDDINGS)
        self._embedder = embedder
        self._roles = roles
        """Whose messages are embedded (None: every role's): by default the principal's own,
        what recall's semantic list searches unless asked (``ENGRAM_EMBEDDING_ROLES``)."""
        self._building = True

    async def start(self) -> None:
        async with self.pool.acquire() as conn:
            self._building = (await store.register(conn, self.generation)).status == "building"

    async def prepare(self, batch: Batch[LogEntry]) -> dict[MessageKey, Vectors]:
        return await embed_entries(self._embedder, self.generation, batch.records, self._roles)

    async def write(
        self,
        conn: asyncpg.Connection,
        batch: Batch[LogEntry],
        prepared: dict[MessageKey, Vectors],
    ) -> int:
        return await write_entry_vectors(
            conn, self.generation.name, batch.records, prepared, self._roles
        )

    def committed(self, count: int) -> None:
        MESSAGES_EMBEDDED.inc(count)

    def report(self, error: BaseException, retry_in_s: float) -> None:
        if isinstance(error, EmbeddingFailure):
            log.warning(
                "embedder.failed",
                code=error.code,
                detail=str(error)[:200],
                retry_in_s=retry_in_s,
                fix="check the embeddings endpoint (ENGRAM_EMBEDDING_*)",
            )
        else:
            super().report(error, retry_in_s)

    async def idle(self, follower: Positions) -> None:
        """Once every partition of the log has been read to its end, the generation is built
        (and active, if none is). A partition the follower holds is moved to its position
        first: a transaction's commit marker sits past the last record, so the offset past the
        last record can stay below the end for good."""
        if not self._building:
            return
        topic = follower.topic
        positions = await follower.positions()
        async with self.pool.acquire() as conn:
            for partition, position in positions.items():
                await self.tracking.advance(conn, topic, partition, position)
        ends = await follower.end_offsets()
        stored = await self.tracking.stored_offsets(self.pool, topic)
        if not ends or any(stored.get(p, 0) < end for p, end in ends.items()):
            return
        name = self.generation.name
        async with self.pool.acquire() as conn:
            await store.mark_built(conn, name)
            if await store.active(conn) is None:
                await store.activate(conn, name)
                log.info("embedder.activated", generation=name)
            else:
                log.info("embedder.built", generation=name)
        self._building = False
