"""What a projection of a topic does with the records a follower hands it: a sink.

A :class:`Sink` is told each partition's decoded records of a fetch (a :class:`Batch`) and
writes them with its stored offset (:mod:`engram.projections.following.tracking`): that, where
the offsets are stored, and which errors it waits out, is all every sink must say. Most sinks
are a :class:`BatchSink`: "write this batch in this transaction" — the follower's one place
that opens the transaction, locks the tracking row, leaves out what a rival already wrote, and
stores the offset past the batch before it commits.

A sink that commits on its own schedule (the belief projector's lanes: several chunks of a
partition in flight, each storing an offset below every record still unsettled) is a
:class:`ScheduledSink`: its :meth:`Sink.take` queues, and it implements the :class:`Schedule`
the follower keeps around the queue (:meth:`Schedule.room`, :meth:`Schedule.settle`,
:meth:`Schedule.hold`, :meth:`Schedule.finish`, :meth:`Schedule.abandon`). Any other sink
writes what it takes before returning, so the follower's schedule for it
(:data:`IMMEDIATE`) has nothing to wait for, settle or drop.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Generic, Protocol, TypeVar

import asyncpg

from engram.infra.db import UNAVAILABLE, report_unavailable, transaction
from engram.projections.following.tracking import Tracking


class Positioned(Protocol):
    """A decoded record: where it was read in its partition."""

    @property
    def offset(self) -> int: ...


T = TypeVar("T", bound=Positioned)
P = TypeVar("P")
R = TypeVar("R")


@dataclass(frozen=True, slots=True)
class Batch(Generic[T]):
    """One partition's decoded records of one fetch, in offset order, and ``next_offset``: one
    past the last record read (which may be past the last record given, when the decoder left
    undecodable records out). What a sink stores with them."""

    topic: str
    partition: int
    records: Sequence[T]
    next_offset: int

    def since(self, stored: int | None) -> Batch[T]:
        """The batch without the records below ``stored`` (written already)."""
        if not stored or not self.records or self.records[0].offset >= stored:
            return self
        return replace(self, records=[r for r in self.records if r.offset >= stored])


class Positions(Protocol):
    """What a sink may ask of the follower when a fetch comes back empty (it has read to the
    end of what the broker has): see :meth:`Sink.idle`."""

    @property
    def topic(self) -> str:
        """The topic followed."""
        ...

    async def positions(self) -> dict[int, int]:
        """The consumer's position in each partition it holds: every record below it has
        been handed to every sink that is not resting."""
        ...

    async def end_offsets(self) -> dict[int, int]:
        """The end offset of every partition of the topic, held here or not."""
        ...


class Sink(ABC, Generic[T]):
    """A projection of a topic: where it stores its offsets, and how it takes a batch (written
    before :meth:`take` returns, unless the sink is a :class:`ScheduledSink`).

    ``name`` names it in logs and metrics and, joined with the other sinks of its follower, in
    the follower's consumer group. ``waits_out`` are the errors, beside PostgreSQL being
    unreachable (:data:`infra.db.UNAVAILABLE`), after which the follower rests this sink and
    hands it the same records again from its stored offset: its other sinks go on."""

    waits_out: tuple[type[Exception], ...] = ()

    def __init__(self, pool: asyncpg.Pool, tracking: Tracking, *, name: str) -> None:
        self.pool = pool
        self.tracking = tracking
        self.name = name
        self.outages = 0
        """Times this sink failed with an error it waits out (each followed by a rest)."""

    async def stored_offsets(self, topic: str) -> dict[int, int]:
        """Where the follower positions this sink: its stored offsets."""
        return await self.tracking.stored_offsets(self.pool, topic)

    async def start(self) -> None:
        """Before the follower subscribes (retried while the database is unreachable)."""

    @abstractmethod
    async def take(self, batch: Batch[T]) -> None:
        """Write ``batch`` and store ``batch.next_offset`` with it, exactly once (or queue it to
        be written, for a :class:`ScheduledSink`). Raising one of the errors it waits out
        (or :data:`engram.infra.db.UNAVAILABLE`) rests the sink; anything else ends the follower."""

    async def idle(self, follower: Positions) -> None:
        """A fetch came back empty: the sink has been handed everything the broker had."""

    def stop(self) -> None:
        """The follower has been asked to stop (wake anything waiting)."""

    def waits_for(self, error: BaseException) -> bool:
        """Whether ``error`` is one this sink waits out."""
        return isinstance(error, (*UNAVAILABLE, *self.waits_out))

    def report(self, error: BaseException, retry_in_s: float) -> None:
        """Say why the sink rests, and what to check."""
        report_unavailable(f"{self.name}.write", error, retry_in_s)


class Schedule(ABC):
    """What the follower does around a sink that writes on its own schedule: wait for room
    before a fetch, settle before a seek, hold on a revocation, finish on a stop, abandon on a
    failure."""

    @abstractmethod
    async def room(self) -> None:
        """Return once the sink can take another fetch; raise what made a write it was
        doing on its own fail."""

    @abstractmethod
    async def settle(self) -> None:
        """Finish or forget whatever was taken and not yet written (it is read again after
        the seek that follows), raising what made a write fail. Called before every seek."""

    @abstractmethod
    def hold(self) -> None:
        """The follower's partitions are being revoked: start no new write until settled."""

    @abstractmethod
    async def finish(self) -> None:
        """The follower is stopping: write what is settled (errors it waits out are reported,
        not raised further: the next start reads again from the stored offsets)."""

    @abstractmethod
    def abandon(self) -> None:
        """The follower is cancelled or failed: drop what is in flight without waiting."""


class ScheduledSink(Sink[T], Schedule):
    """A sink whose :meth:`take` queues, writing on a schedule of its own (the belief
    projector's lanes, :mod:`engram.projections.beliefs.applying`)."""


class _Immediate(Schedule):
    """The schedule of a sink that writes what it takes before :meth:`Sink.take` returns:
    never a write in flight, so nothing to wait for, settle, hold, finish or drop."""

    async def room(self) -> None:
        pass

    async def settle(self) -> None:
        pass

    def hold(self) -> None:
        pass

    async def finish(self) -> None:
        pass

    def abandon(self) -> None:
        pass


IMMEDIATE: Schedule = _Immediate()


def schedule_of(sink: Sink[T]) -> Schedule:
    """The schedule the follower keeps around ``sink``: its own, or :data:`IMMEDIATE`."""
    return sink if isinstance(sink, Schedule) else IMMEDIATE


class BatchSink(Sink[T], Generic[T, P]):
    """A sink that writes each batch in one transaction of the follower's: subclasses say what
    to do before it (:meth:`prepare`, with no connection held: a model call) and inside it
    (:meth:`write`, given only the records its stored offset does not cover yet)."""

    def __init__(self, pool: asyncpg.Pool, tracking: Tracking, *, name: str) -> None:
        super().__init__(pool, tracking, name=name)
        self.written = 0
        """What :meth:`write` counted, over the transactions that committed."""

    @abstractmethod
    async def prepare(self, batch: Batch[T]) -> P:
        """Work done before the transaction, on every record of the batch."""

    @abstractmethod
    async def write(self, conn: asyncpg.Connection, batch: Batch[T], prepared: P) -> int:
        """Write ``batch`` inside the transaction that then stores its offset; how many items
        it wrote or read (the sink's own count, :meth:`committed`)."""

    def committed(self, count: int) -> None:
        """After a transaction committed, with what its :meth:`write` counted (metrics)."""

    async def take(self, batch: Batch[T]) -> None:
        prepared = await self.prepare(batch)
        async with self.pool.acquire() as conn:
            count = await self.commit(conn, batch, prepared)
        self.written += count
        self.committed(count)

    async def commit(self, conn: asyncpg.Connection, batch: Batch[T], prepared: P) -> int:
        """:meth:`write` and the stored offset in one transaction on ``conn``."""

        async def write(unread: Batch[T]) -> int:
            return await self.write(conn, unread, prepared)

        return await write_tracked(conn, self.tracking, batch, write)


async def write_tracked(
    conn: asyncpg.Connection,
    tracking: Tracking,
    batch: Batch[T],
    write: Callable[[Batch[T]], Awaitable[R]],
) -> R:
    """The one transaction every batch is written in: lock the partition's tracking row
    (:meth:`Tracking.claim`), ``write`` what it does not cover yet, store the offset past the
    batch. A rival writing the same partition waits on the row, then skips what this wrote."""
    async with transaction(conn):
        stored = await tracking.claim(conn, batch.topic, batch.partition)
        result = await write(batch.since(stored))
        await tracking.advance(conn, batch.topic, batch.partition, batch.next_offset)
    return result


def lowest(offsets: Sequence[Mapping[int, int]]) -> dict[int, int]:
    """By partition, the lowest of several sinks' stored offsets; a partition one of them has
    not stored (it starts at the beginning) is left out, and so read from the beginning."""
    if not offsets:
        return {}
    shared = set(offsets[0]).intersection(*offsets[1:])
    return {p: min(o[p] for o in offsets) for p in shared}
