"""The notifier as a stage: a log follower of ``engram.memory-events`` whose one sink owes
deliveries, beside the sender that pays them.

The sink (:class:`OwedDeliveries`) is a :class:`engram.projections.following.BatchSink`: the follower
seeks to its stored offsets (``public.projector_offset``, projector ``notifications``: shared
by every projection generation, like the deliveries), fetches, decodes each record once
(:func:`decode_memory_events`) and writes one partition's batch with its offset in one
transaction (:func:`engram.notifications.owed.record_owed`), so a restart resumes exactly after
what was owed and a record read twice owes nothing twice. A record that does not decode (not a
memory event) owes nothing and is passed over, its offset stored with the rest, so a bad record
never stops notifications. The follower rests the sink while PostgreSQL is unreachable.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable

import asyncpg
import structlog
from aiokafka import ConsumerRecord, TopicPartition
from pydantic import ValidationError

from engram.infra.metrics import WEBHOOK_OWED
from engram.infra.settings import KafkaSettings, WebhooksSettings
from engram.notifications import SINK, MemoryRecord, record_owed
from engram.notifications.notifier import Notifier
from engram.notifications.vault import SecretVault
from engram.projections.following import Batch, BatchSink, LogFollower, Tracking, write_tracked
from engram.schemas.memory_events import decode_memory_event

log = structlog.get_logger(__name__)

NOTIFIER_TRACKING = Tracking(SINK, table="public.projector_offset")
"""Where the sink stores how far it has owed: in ``public``, like the deliveries it writes."""


async def decode_memory_events(
    tp: TopicPartition, records: list[ConsumerRecord]
) -> list[MemoryRecord]:
    """The follower's decoder: each record of one partition's fetch as a memory event, in
    offset order; one that is not a memory event is left out, after saying where it is."""
    decoded: list[MemoryRecord] = []
    for record in records:
        try:
            event = decode_memory_event(record.value or b"")
        except ValidationError:
            log.warning("notifications.undecodable", partition=tp.partition, offset=record.offset)
            continue
        decoded.append(MemoryRecord(tp.topic, tp.partition, record.offset, record.timestamp, event))
    return decoded


async def owe_batch(conn: asyncpg.Connection, batch: Batch[MemoryRecord]) -> int:
    """Owe what ``batch`` owes and store the offset past it, in one transaction on ``conn`` (the
    sink's write, for a writer outside a follower: a test, a bench)."""

    async def write(unread: Batch[MemoryRecord]) -> int:
        return await record_owed(conn, unread.records)

    return await write_tracked(conn, NOTIFIER_TRACKING, batch, write)


class OwedDeliveries(BatchSink[MemoryRecord, None]):
    """The deliveries each memory event owes, written with the sink's offset; ``on_owed`` is
    called after a transaction that owed something committed (the sender in the same process
    wakes)."""

    def __init__(self, pool: asyncpg.Pool, on_owed: Callable[[], None] = lambda: None) -> None:
        super().__init__(pool, NOTIFIER_TRACKING, name=SINK)
        self._on_owed = on_owed

    async def prepare(self, batch: Batch[MemoryRecord]) -> None:
        return None

    async def write(
        self, conn: asyncpg.Connection, batch: Batch[MemoryRecord], prepared: None
    ) -> int:
        return await record_owed(conn, batch.records)

    def committed(self, count: int) -> None:
        if count:
            WEBHOOK_OWED.inc(count)
            self._on_owed()


def follow_memory_events(
    settings: KafkaSettings, pool: asyncpg.Pool, on_owed: Callable[[], None] = lambda: None
) -> LogFollower[MemoryRecord]:
    """A log follower of ``engram.memory-events`` with the notifier's sink; its consumer group
    is ``<group>-notifications``."""
    return LogFollower(
        settings,
        topic=settings.memory_events_topic,
        decode=decode_memory_events,
        sinks=[OwedDeliveries(pool, on_owed)],
    )


class NotifierStage:
    """The notifier whole: the follower that owes and the sender that pays
    (:class:`engram.notifications.notifier.Notifier`), side by side on one loop; the sink wakes
    the sender when it owed something. One stage for ``engram notifier`` and ``engram worker``."""

    def __init__(self, follower: LogFollower[MemoryRecord], sender: Notifier) -> None:
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
        return cls(follow_memory_events(kafka, pool, on_owed=sender.wake), sender)

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
