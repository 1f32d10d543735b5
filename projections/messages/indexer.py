"""The message indexer: a plain aiokafka consumer of ``engram.episodes`` that keeps the index of
messages (:mod:`projections.messages.store`).

A stage of its own, beside formation and the belief projector, under its own consumer group
(``<group>-messages``) and its own stored offsets (``projector_offset``, projector
``messages``): it never waits for formation and formation never waits for it. Like the belief
projector, the stored offsets are the truth — on every assignment it seeks to them, and each
partition's fetch is written with its offset in one transaction — so a replay into emptied
tables (or a new generation's schema) rebuilds the index from offset 0. Kafka's committed
offsets are written too, but only as a lag gauge. It runs in ``engram worker`` (and in ``engram
rederive`` for a generation) as a task beside the projector.
"""

from __future__ import annotations

import asyncio
import contextlib

import asyncpg
import structlog
from aiokafka import AIOKafkaConsumer
from aiokafka.errors import KafkaError
from pydantic import ValidationError

from engram.infra.db import (
    DATABASE_BACKOFF,
    UNAVAILABLE,
    report_unavailable,
    retry_while_unavailable,
)
from engram.infra.metrics import MESSAGES_INDEXED
from engram.infra.settings import KafkaSettings
from engram.keys.errors import CiphertextRejected, KeyDestroyed
from engram.projections.following import SeekToStoredOffsets
from engram.projections.messages.store import INDEXER, LogRecord, index_records
from engram.schemas.log import decode_log_event
from engram.schemas.sealed import SealedEvent
from engram.sealing.events import NoKeys, Sealer

log = structlog.get_logger(__name__)

_SEALED = b'"sealed"'
"""Every sealed event has this bytes sequence (its type); most plaintext records do not, so
only those that have it are decoded twice."""

MAX_FETCH = 500
"""Records of one partition written in one transaction at most."""


async def indexed_offsets(pool: asyncpg.Pool, topic: str) -> dict[int, int]:
    """The indexer's stored offset of each partition of ``topic`` (the next record to index)."""
    rows = await pool.fetch(
        "SELECT partition, next_offset FROM projector_offset WHERE projector = $1 AND topic = $2",
        INDEXER,
        topic,
    )
    return {row["partition"]: row["next_offset"] for row in rows}


async def opened(sealer: Sealer, record: LogRecord) -> LogRecord:
    """The record with a sealed event's words opened; a forgotten principal's (key
    destroyed) or an altered one's become an empty record, which yields no message. No KEK
    in this process raises: skipping would leave holes for good. Shared by every reader of the
    log's messages (the indexer, the embedding follower)."""
    if _SEALED not in record.value:
        return record
    try:
        event = decode_log_event(record.value)
    except ValidationError:
        return record  # not a log event at all: messages_of skips it
    if not isinstance(event, SealedEvent):
        return record
    try:
        words = await retry_while_unavailable(lambda: sealer.open_words(event), what="log.open")
    except (KeyDestroyed, CiphertextRejected) as failure:
        log.info("log.unreadable", offset=record.offset, code=failure.code)
        return LogRecord(record.partition, record.offset, b"")
    # messages_of decodes (and validates) it, as it does every plaintext record
    return LogRecord(record.partition, record.offset, words)


class MessageIndexer:
    """Indexes the log's messages until stopped."""

    def __init__(
        self, settings: KafkaSettings, pool: asyncpg.Pool, sealer: Sealer | None = None
    ) -> None:
        self._settings = settings
        self._pool = pool
        self._sealer: Sealer = sealer or NoKeys()
        self._stopping = asyncio.Event()
        self._listener: SeekToStoredOffsets | None = None
        self.indexed = 0
        """Messages read into the index (written or left out as hidden) by this run."""
        self.outages = 0

    def stop(self) -> None:
        self._stopping.set()

    def readiness(self) -> tuple[bool, str]:
        if self._listener is None or not self._listener.positioned:
            return False, "partitions not yet assigned and positioned at the stored offsets"
        return True, "ready"

    async def run(self) -> None:
        topic = self._settings.episodes_topic
        consumer = AIOKafkaConsumer(
            bootstrap_servers=self._settings.bootstrap,
            group_id=f"{self._settings.group_id}-messages",
            enable_auto_commit=False,
            auto_offset_reset="earliest",
            session_timeout_ms=self._settings.session_timeout_ms,
            heartbeat_interval_ms=max(self._settings.session_timeout_ms // 3, 500),
            isolation_level="read_committed",
        )
        listener = self._listener = SeekToStoredOffsets(
            consumer, self._pool, topic, offsets_of=indexed_offsets
        )
        consumer.subscribe([topic], listener=listener)
        await consumer.start()
        outages = 0
        try:
            while not self._stopping.is_set():
                try:
                    fetched = await self._once(consumer, listener, topic)
                except UNAVAILABLE as error:
                    # The partition's transaction rolled back: read again from the stored
                    # offsets once the database answers.
                    self.outages += 1
                    outages += 1
                    delay = DATABASE_BACKOFF.after(outages)
                    report_unavailable("indexer.write", error, delay)
                    listener.seek_pending = True
                    with contextlib.suppress(TimeoutError):
                        await asyncio.wait_for(self._stopping.wait(), timeout=delay)
                    continue
                outages = 0
                if fetched:
                    with contextlib.suppress(KafkaError):  # a lag gauge only
                        await consumer.commit()
        finally:
            await consumer.stop()

    async def _once(
        self, consumer: AIOKafkaConsumer, listener: SeekToStoredOffsets, topic: str
    ) -> bool:
        """Fetch once and index each partition's records; whether anything was fetched."""
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
            async with self._pool.acquire() as conn:
                read = await index_records(conn, topic, tp.partition, batch)
            self.indexed += read
            MESSAGES_INDEXED.inc(read)
        return bool(fetched)
