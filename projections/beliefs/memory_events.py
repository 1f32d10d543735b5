"""Memory events: recorded in the outbox inside the projector's transaction (by the store, from
what resolution decided), published after by :func:`drain_outbox`.

The outbox makes publication at-least-once: a projector killed between its commit and its
publish finds the events still pending on restart and sends them then. The outbox keeps every
event; which are still to publish, and in what order, is ``memory_event_pending`` (a narrow row
an event, deleted once Kafka has it — marking the wide outbox row instead rewrote it and its
three indexes).
"""

from __future__ import annotations

import asyncio
import contextlib
import uuid
from collections.abc import Awaitable, Callable, Iterable

import asyncpg
import orjson
import structlog
from aiokafka import AIOKafkaProducer
from aiokafka.partitioner import DefaultPartitioner
from aiokafka.producer.message_accumulator import BatchBuilder

from engram.schemas.common import PSEUDONYMOUS, principal_key

log = structlog.get_logger(__name__)

DRAIN_LIMIT = 1000
"""Events read from the outbox per drain; a fuller outbox takes several drains."""

_partitioner = DefaultPartitioner()


class QueuedPayloads:
    """The JSON of the events this process committed to the outbox, kept until they are
    published, so that a drain reads only which events are pending and in what order, not
    their payloads back (the payloads were most of what a drain read: ~0.5 KB an event, and a
    ``jsonb`` → text conversion each).

    Only rows a committed transaction inserted are added (an event already queued keeps its
    row, whose payload may be older), so a payload here is the row's. What is not here — an
    earlier run's rows, another process's, or everything after the bound cleared it while the
    broker was down — is read from the outbox as before: this changes what a drain reads, not
    what it publishes or when a row counts as published."""

    LIMIT = 20 * DRAIN_LIMIT

    def __init__(self) -> None:
        self._by_id: dict[uuid.UUID, str] = {}

    def add(self, events: Iterable[tuple[uuid.UUID, str]]) -> None:
        if len(self._by_id) >= self.LIMIT:
            self._by_id.clear()  # bounded: the outbox still has every one of them
        self._by_id.update(events)

    def known(self, event_ids: Iterable[uuid.UUID]) -> dict[uuid.UUID, str]:
        return {i: self._by_id[i] for i in event_ids if i in self._by_id}

    def forget(self, event_ids: Iterable[uuid.UUID]) -> None:
        for event_id in event_ids:
            self._by_id.pop(event_id, None)

    def __len__(self) -> int:
        return len(self._by_id)


async def _payloads(
    pool: asyncpg.Pool, event_ids: list[uuid.UUID], queued: QueuedPayloads | None
) -> dict[uuid.UUID, str]:
    """Each pending event's JSON: from ``queued`` where this process has it, else the outbox."""
    payloads = queued.known(event_ids) if queued is not None else {}
    missing = [i for i in event_ids if i not in payloads]
    if missing:
        rows = await pool.fetch(
            "SELECT event_id, payload::text AS payload FROM memory_event_outbox "
            "WHERE event_id = ANY($1::uuid[])",
            missing,
        )
        payloads.update((r["event_id"], r["payload"]) for r in rows)
    return payloads


def _keyed_by(payload: bytes, owner: str) -> str:
    """Who an event's record key names: the pseudonym a version-2 memory event names its
    principal by (one principal's events still share a key, so a partition and an order),
    else the outbox row's owner (the principal, or a forgotten one's hash)."""
    event = orjson.loads(payload)  # ~1 µs: the outbox's jsonb spells it its own way
    if event.get("schema_version") != PSEUDONYMOUS or "principal" not in event:
        return owner
    principal: str = event["principal"]
    return principal


async def drain_outbox(
    pool: asyncpg.Pool,
    producer: AIOKafkaProducer,
    topic: str,
    queued: QueuedPayloads | None = None,
) -> int:
    """Publish up to :data:`DRAIN_LIMIT` pending events in order, deleting their pending rows
    (``memory_event_pending``) once Kafka acks them all; the number of events published.

    Events go out as one record batch per partition (``send_batch``), not one ``send`` each: a
    chunk of claims yields thousands of events, and the per-message path (partitioner,
    accumulator, a future per record) was most of publishing. Each event's partition is the one
    ``send`` would have picked for its key (the producer's default partitioner), so one
    principal's events stay in one partition and in outbox order; the idempotent producer keeps
    the batches in order. A failure leaves every row pending, to be sent again (consumers
    dedupe by ``event_id``). Payloads come from ``queued`` where this process committed them
    (:class:`QueuedPayloads`), else from the outbox."""
    rows = await pool.fetch(
        "SELECT sequence, event_id, tenant, principal FROM memory_event_pending "
        f"ORDER BY sequence LIMIT {DRAIN_LIMIT}"
    )
    if not rows:
        return 0
    done = [row["sequence"] for row in rows]
    payloads = await _payloads(pool, [row["event_id"] for row in rows], queued)
    # An event whose outbox row is gone (its principal forgotten between the two reads, which
    # deletes its pending row too) is not sent; its pending row, if any, goes with the rest.
    rows = [row for row in rows if row["event_id"] in payloads]
    ids = [row["event_id"] for row in rows]
    partitions = sorted(await producer.partitions_for(topic))
    open_batches: dict[int, BatchBuilder] = {}
    acks: list[asyncio.Future[object]] = []
    partition_of: dict[bytes, int] = {}
    for row in rows:
        value = payloads[row["event_id"]].encode()
        key = principal_key(row["tenant"], _keyed_by(value, row["principal"]))
        partition = partition_of.get(key)
        if partition is None:
            partition = partition_of[key] = _partitioner(key, partitions, partitions)
        batch = open_batches.get(partition)
        if batch is None or batch.append(key=key, value=value, timestamp=None) is None:
            if batch is not None:  # full: send it and start the partition's next batch
                acks.append(await producer.send_batch(batch, topic, partition=partition))
            batch = open_batches[partition] = producer.create_batch()
            if batch.append(key=key, value=value, timestamp=None) is None:
                raise ValueError(f"memory event {row['event_id']} exceeds the producer's batch")
    for partition, batch in open_batches.items():
        acks.append(await producer.send_batch(batch, topic, partition=partition))
    await asyncio.gather(*acks)
    await pool.execute("DELETE FROM memory_event_pending WHERE sequence = ANY($1::bigint[])", done)
    if queued is not None:
        queued.forget(ids)
    return len(rows)


class OutboxPublisher:
    """Drains the outbox in a task of its own, woken after each committed chunk.

    Publishing used to sit between one chunk's commit and the next chunk's fetch; as a task it
    overlaps the next chunk (its decode and resolution run while Kafka acknowledges and the
    outbox rows are marked on another connection). One drain runs at a time, so events still
    leave in outbox order. ``drain`` reports the events it published and handles its own errors
    (returning 0): what it could not publish waits in the outbox for the next wake."""

    def __init__(self, drain: Callable[[], Awaitable[int]]):
        self._drain = drain
        self._wanted = asyncio.Event()
        self._closing = False
        self._abandoned = False
        self._task: asyncio.Task[None] | None = None

    def start(self) -> None:
        """Start publishing, beginning with whatever an earlier run left in the outbox."""
        self._task = asyncio.create_task(self._run(), name="outbox-publisher")
        self._wanted.set()

    def wake(self) -> None:
        self._wanted.set()

    async def close(self) -> None:
        """Publish what is pending once more, then stop."""
        if self._task is None:
            return
        if self._abandoned:
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
            return
        self._closing = True
        self._wanted.set()
        await self._task

    def abandon(self) -> None:
        """Stop now (the projector was cancelled): what is unpublished waits in the outbox."""
        if self._task is not None:
            self._abandoned = True
            self._task.cancel()

    async def _run(self) -> None:
        while not (self._closing and not self._wanted.is_set()):
            await self._wanted.wait()
            self._wanted.clear()
            try:
                while await self._drain() >= DRAIN_LIMIT:
                    pass
            except Exception:  # a bug, not an outage: keep it loud, keep the projector going
                log.exception("projector.outbox_publisher_failed")
