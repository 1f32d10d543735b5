"""Following ``engram.memory-events`` into the notifier's sink — the smallest loop that can.

THIS LOOP IS A STAND-IN FOR THE LOG FOLLOWER. Every state-writing consumer of a topic is to be a
sink behind one follower (DESIGN.md: stored offsets written in the sink's transaction, one fetch
and one opening per record); that follower was being built beside this work. Until it lands,
this drives :func:`engram.notifications.owed.record_owed` with the pieces the other consumers
share: :class:`projections.following.SeekToStoredOffsets` on the sink's stored offsets
(``webhook_offset``), one transaction per partition's fetch, Kafka's committed offsets as a lag
gauge only. When the follower lands, the sink is registered with it and this module goes.

Each record is decoded with :func:`schemas.memory_events.decode_memory_event`; one that does not
decode (not a memory event) owes nothing and is passed over, its offset stored with the rest, so
a bad record never stops notifications.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable

import asyncpg
import structlog
from aiokafka import AIOKafkaConsumer, ConsumerRecord
from aiokafka.errors import KafkaError
from pydantic import ValidationError

from engram.infra.db import DATABASE_BACKOFF, UNAVAILABLE, report_unavailable
from engram.infra.metrics import WEBHOOK_OWED
from engram.infra.settings import KafkaSettings, WebhooksSettings
from engram.notifications import MemoryRecord, notifier_offsets, record_owed
from engram.notifications.notifier import Notifier
from engram.notifications.vault import SecretVault
from engram.projections.following import SeekToStoredOffsets
from engram.schemas.memory_events import decode_memory_event

log = structlog.get_logger(__name__)

MAX_FETCH = 500


class MemoryEventsFollower:
    """Reads memory events into owed deliveries until stopped; ``on_owed`` is called after a
    transaction that owed something committed (the notifier in the same process wakes)."""

    def __init__(
        self,
        settings: KafkaSettings,
        pool: asyncpg.Pool,
        on_owed: Callable[[], None] = lambda: None,
    ) -> None:
        self._settings = settings
        self._pool = pool
        self._on_owed = on_owed
        self._stopping = asyncio.Event()
        self._listener: SeekToStoredOffsets | None = None
        self.read = 0

    def stop(self) -> None:
        self._stopping.set()

    def readiness(self) -> tuple[bool, str]:
        if self._listener is None or not self._listener.positioned:
            return False, "partitions not yet assigned and positioned at the stored offsets"
        return True, "ready"

    async def run(self) -> None:
        topic = self._settings.memory_events_topic
        consumer = AIOKafkaConsumer(
            bootstrap_servers=self._settings.bootstrap,
            group_id=f"{self._settings.group_id}-notifications",
            enable_auto_commit=False,
            auto_offset_reset="earliest",
            session_timeout_ms=self._settings.session_timeout_ms,
            heartbeat_interval_ms=max(self._settings.session_timeout_ms // 3, 500),
            isolation_level="read_committed",
        )
        listener = self._listener = SeekToStoredOffsets(
            consumer, self._pool, topic, offsets_of=notifier_offsets
        )
        consumer.subscribe([topic], listener=listener)
        await consumer.start()
        outages = 0
        try:
            while not self._stopping.is_set():
                try:
                    fetched = await self._once(consumer, listener, topic)
                except UNAVAILABLE as error:
                    outages += 1
                    delay = DATABASE_BACKOFF.after(outages)
                    report_unavailable("notifications.owe", error, delay)
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
        if listener.seek_pending:
            await listener.reseek()
        generation = listener.generation
        fetched = await consumer.getmany(timeout_ms=200, max_records=MAX_FETCH)
        if listener.moved_since(generation):
            await listener.reseek()
            return False
        for tp, records in fetched.items():
            decoded = [_decoded(topic, tp.partition, r) for r in records]
            async with self._pool.acquire() as conn, conn.transaction():
                owed = await record_owed(
                    conn,
                    topic,
                    tp.partition,
                    [r for r in decoded if r is not None],
                    next_offset=records[-1].offset + 1,
                )
            self.read += len(records)
            if owed:
                WEBHOOK_OWED.inc(owed)
                self._on_owed()
        return bool(fetched)


def _decoded(topic: str, partition: int, record: ConsumerRecord) -> MemoryRecord | None:
    try:
        event = decode_memory_event(record.value or b"")
    except ValidationError:
        log.warning("notifications.undecodable", partition=partition, offset=record.offset)
        return None
    return MemoryRecord(topic, partition, record.offset, record.timestamp, event)


class NotifierStage:
    """The notifier whole: the follower that owes (:class:`MemoryEventsFollower`) and the sender
    that pays (:class:`engram.notifications.notifier.Notifier`), side by side on one loop; the
    follower wakes the sender when it owed something. One stage for ``engram notifier`` and
    ``engram worker``."""

    def __init__(self, follower: MemoryEventsFollower, sender: Notifier) -> None:
        self._follower = follower
        self._sender = sender

    @classmethod
    def build(
        cls,
        kafka: KafkaSettings,
        webhooks: WebhooksSettings,
        pool: asyncpg.Pool,
        vault: SecretVault,
    ) -> NotifierStage:
        sender = Notifier(webhooks, pool, vault)
        return cls(MemoryEventsFollower(kafka, pool, on_owed=sender.wake), sender)

    def stop(self) -> None:
        self._follower.stop()
        self._sender.stop()

    def readiness(self) -> tuple[bool, str]:
        for part in (self._follower, self._sender):
            ready, why = part.readiness()
            if not ready:
                return ready, why
        return True, "ready"

    async def run(self) -> None:
        tasks = [
            asyncio.create_task(self._follower.run(), name="notifications-follower"),
            asyncio.create_task(self._sender.run(), name="notifications-sender"),
        ]
        try:
            done, _ = await asyncio.wait(tasks, return_when=asyncio.FIRST_EXCEPTION)
            for task in done:
                task.result()  # a part that failed ends the stage, loudly
        finally:
            self.stop()
            await asyncio.gather(*tasks, return_exceptions=True)
