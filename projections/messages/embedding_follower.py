"""The embedding follower: a plain aiokafka consumer of ``engram.episodes`` that embeds every
message of the log into one embedding generation (:mod:`projections.messages.vectors`).

A stage of its own, off the formation path, like the message indexer: its own consumer group
(``<group>-embeddings``) and its own stored offsets (``projector_offset``, projector
``embeddings/<generation>``), so formation, the projector and the indexer never wait for it and
its lag is its own (freshness reports it as ``embedded_offset`` / ``embedding_lag_episodes``).
On every assignment it seeks to the stored offsets; a generation it has never written starts
at offset 0, which is how a generation is **built by replay** and then **followed live** by the
same loop. Embedding happens before the transaction (no connection is held across a model
call); the vectors and the offset are then written in one transaction per partition.

The generation is the one the settings name (model, size and the default text recipe). It is
registered ``building``; once every partition's stored offset has reached the log's end the
follower marks it ``built`` and, if no generation is active, activates it (atomically,
:func:`embeddings.store.activate`). Switching models is therefore: configure the new one, let
it build, activate it; the previously active generation is not followed meanwhile (its lag
grows and freshness shows it).
"""

from __future__ import annotations

import asyncio
import contextlib

import asyncpg
import structlog
from aiokafka import AIOKafkaConsumer, TopicPartition
from aiokafka.errors import KafkaError

from engram.infra.db import DATABASE_BACKOFF, UNAVAILABLE, report_unavailable
from engram.infra.metrics import MESSAGES_EMBEDDED
from engram.infra.settings import KafkaSettings
from engram.projections.following import SeekToStoredOffsets
from engram.projections.messages.embeddings import store
from engram.projections.messages.embeddings.embedder import Embedder, EmbeddingFailure
from engram.projections.messages.embeddings.generation import EmbeddingGeneration
from engram.projections.messages.indexer import MAX_FETCH, opened
from engram.projections.messages.store import LogRecord
from engram.projections.messages.vectors import (
    embed_messages,
    embedded_offsets,
    store_offset,
    write_vectors,
)
from engram.sealing.events import NoKeys, Sealer

log = structlog.get_logger(__name__)


_RETRIED: tuple[type[Exception], ...] = (*UNAVAILABLE, EmbeddingFailure)
"""What the loop waits out and retries from the stored offsets."""


class EmbeddingFollower:
    """Embeds the log's messages into one generation until stopped."""

    def __init__(
        self,
        settings: KafkaSettings,
        pool: asyncpg.Pool,
        embedder: Embedder,
        sealer: Sealer | None = None,
    ) -> None:
        self._settings = settings
        self._pool = pool
        self._embedder = embedder
        self.generation = EmbeddingGeneration.of(embedder.model)
        self._sealer: Sealer = sealer or NoKeys()
        self._stopping = asyncio.Event()
        self._listener: SeekToStoredOffsets | None = None
        self._building = True
        self.embedded = 0
        """Messages read by this run (embedded and written, or left out as hidden)."""
        self.outages = 0

    def stop(self) -> None:
        self._stopping.set()

    def readiness(self) -> tuple[bool, str]:
        if self._listener is None or not self._listener.positioned:
            return False, "partitions not yet assigned and positioned at the stored offsets"
        return True, "ready"

    async def run(self) -> None:
        topic = self._settings.episodes_topic
        name = self.generation.name
        async with self._pool.acquire() as conn:
            self._building = (await store.register(conn, self.generation)).status == "building"
        consumer = AIOKafkaConsumer(
            bootstrap_servers=self._settings.bootstrap,
            group_id=f"{self._settings.group_id}-embeddings",
            enable_auto_commit=False,
            auto_offset_reset="earliest",
            session_timeout_ms=self._settings.session_timeout_ms,
            heartbeat_interval_ms=max(self._settings.session_timeout_ms // 3, 500),
            isolation_level="read_committed",
        )

        async def offsets(pool: asyncpg.Pool, topic: str) -> dict[int, int]:
            return await embedded_offsets(pool, topic, name)

        listener = self._listener = SeekToStoredOffsets(
            consumer, self._pool, topic, offsets_of=offsets
        )
        consumer.subscribe([topic], listener=listener)
        await consumer.start()
        try:
            await self._loop(consumer, listener, topic)
        finally:
            await consumer.stop()

    async def _loop(
        self, consumer: AIOKafkaConsumer, listener: SeekToStoredOffsets, topic: str
    ) -> None:
        outages = 0
        while not self._stopping.is_set():
            try:
                fetched = await self._once(consumer, listener, topic)
                if self._building and not fetched:
                    await self._finish_building(consumer, topic)
            except _RETRIED as error:
                # Nothing of the fetch was written (the partition's transaction rolled back, or
                # the embedder made no vectors): read again from the stored offsets later. An
                # embedder that keeps failing only makes this stage lag (freshness shows it);
                # formation, the projector and the indexer never wait for it.
                self.outages += 1
                outages += 1
                delay = DATABASE_BACKOFF.after(outages)
                self._report(error, delay)
                listener.seek_pending = True
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self._stopping.wait(), timeout=delay)
                continue
            outages = 0
            if fetched:
                with contextlib.suppress(KafkaError):  # a lag gauge only
                    await consumer.commit()

    @staticmethod
    def _report(error: BaseException, delay: float) -> None:
        if isinstance(error, EmbeddingFailure):
            log.warning(
                "embedder.failed",
                code=error.code,
                detail=str(error)[:200],
                retry_in_s=delay,
                fix="check the embeddings endpoint (ENGRAM_EMBEDDING_*)",
            )
        else:
            report_unavailable("embedder.write", error, delay)

    async def _once(
        self, consumer: AIOKafkaConsumer, listener: SeekToStoredOffsets, topic: str
    ) -> bool:
        """Fetch once, embed each partition's messages and write them; whether anything was
        fetched."""
        if listener.seek_pending:
            await listener.reseek()
        generation = listener.generation
        fetched = await consumer.getmany(timeout_ms=200, max_records=MAX_FETCH)
        if listener.moved_since(generation):
            await listener.reseek()  # fetched across a rebalance: the stored offsets decide
            return False
        for tp, records in fetched.items():
            batch = [
                await opened(self._sealer, LogRecord(tp.partition, r.offset, r.value or b""))
                for r in records
            ]
            vectors = await embed_messages(self._embedder, self.generation, batch)
            async with self._pool.acquire() as conn:
                read = await write_vectors(
                    conn, self.generation.name, topic, tp.partition, batch, vectors
                )
            self.embedded += read
            MESSAGES_EMBEDDED.inc(read)
        return bool(fetched)

    async def _finish_building(self, consumer: AIOKafkaConsumer, topic: str) -> None:
        """Once every partition of the log has been read to its end, the generation is built
        (and active, if none is). A partition this follower holds is moved to its position
        first: a transaction's commit marker sits past the last record, so the offset past the
        last record can stay below the end for good."""
        name = self.generation.name
        if self._listener is None or not self._listener.positioned:
            return
        async with self._pool.acquire() as conn:
            for tp in consumer.assignment():
                position = await consumer.position(tp)
                await store_offset(conn, name, topic, tp.partition, position)
        partitions = consumer.partitions_for_topic(topic) or set()
        ends = await consumer.end_offsets([TopicPartition(topic, p) for p in partitions])
        stored = await embedded_offsets(self._pool, topic, name)
        if not ends or any(stored.get(tp.partition, 0) < end for tp, end in ends.items()):
            return
        async with self._pool.acquire() as conn:
            await store.mark_built(conn, name)
            if await store.active(conn) is None:
                await store.activate(conn, name)
                log.info("embedder.activated", generation=name)
            else:
                log.info("embedder.built", generation=name)
        self._building = False
