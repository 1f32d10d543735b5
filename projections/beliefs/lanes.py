"""Lanes of a claims partition: its records split by principal, so that one lane's chunk is
resolved here while another's statements run in PostgreSQL.

Within one partition the projector and PostgreSQL used to take turns: a chunk's resolution
reads what the chunk before it wrote, so the next chunk waited for the last one's commit, and
one of the two cores sat idle about half the time. Resolution reads only the rows of the
principals its chunk names, so chunks naming disjoint principals need not wait for each other:
while a principal has records here (queued or in a chunk not yet committed) they all go to one
lane, each lane applies one chunk at a time, in offset order, in its own transaction, and so a
principal's batches are applied in log order, one transaction after the other. A principal
with nothing here goes to the lane with the fewest records (a fixed hash split the bench's
eight principals 7 to 1 as often as 4 to 4); where its batches are applied does not change
what they project.

Lanes run side by side only while the partition is behind. A chunk has a fixed cost (some
thirty statements, about as much CPU as fifty batches), so a caught-up partition, whose
fetches bring a few records at a time, splitting them between lanes would only double that
cost and take the CPU from formation on the same machine (two processes end to end ran 12%
slower so). Idle lanes' records are therefore grouped into one chunk until a group holds a
lane's share of what the partition queues ahead, and a group short of it waits for the chunk in
flight (:meth:`PartitionLanes.next_chunks`).

What keeps that exactly-once is the offset a chunk stores. The partition's stored offset says
"everything below me is applied", and lanes commit out of offset order, so a chunk may store
only the lowest offset any *other* chunk in flight or record still queued holds (its own
queued records included), or, with nothing left, one past the last offset read:
:meth:`PartitionLanes.safe_offset`. A record between the stored offset and what the lanes
committed is read again after a restart and left out by its batch's run id, as a redelivered
record always was. A record leaves these books only when its chunk has committed; the
projector drops the books as a whole, after every chunk has finished, before it seeks to the
stored offsets again.

This module is bookkeeping only: no I/O, no tasks.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Generic, Protocol, TypeVar


class LaneRecord(Protocol):
    """What the books need of a record: its offset, and whose it is."""

    @property
    def offset(self) -> int: ...

    @property
    def lane_key(self) -> bytes: ...


R = TypeVar("R", bound=LaneRecord)


@dataclass(frozen=True)
class Chunk(Generic[R]):
    """Records to apply in one transaction: every record taken from ``lanes``, in offset
    order. One lane's when the partition is behind; several idle lanes' together when it has
    caught up (a chunk costs about as much to write as fifty batches, so splitting a handful
    of records between lanes only doubles that cost)."""

    lanes: tuple[int, ...]
    records: list[R]


class PartitionLanes(Generic[R]):
    """The fetched records of one partition not yet committed, by lane: queued (not taken
    yet) and in flight (taken by a chunk, until it commits)."""

    def __init__(self, lanes: int) -> None:
        if lanes < 1:
            raise ValueError(f"a partition needs at least one lane, not {lanes}")
        self.lanes = lanes
        self._queued: list[deque[R]] = [deque() for _ in range(lanes)]
        self._in_flight: list[list[R] | None] = [None] * lanes
        self._offered: dict[tuple[int, ...], int] = {}
        self._lane_of: dict[bytes, int] = {}
        """The lane of each principal with records here."""
        self._holding: dict[bytes, int] = {}
        """How many records each principal has here, queued or in flight."""
        self.read_through = -1
        """The last offset read from the partition (undecodable records included)."""
        self.stored = -1
        """The highest offset a committed chunk of these books stored (-1: none yet)."""

    def add(self, records: Iterable[R], *, read_through: int) -> None:
        """Queue a fetch's records (in offset order): each on its principal's lane, or, for a
        principal with nothing here, on the lane holding the fewest records."""
        for record in records:
            key = record.lane_key
            lane = self._lane_of.get(key)
            if lane is None:
                lane = self._lane_of[key] = min(range(self.lanes), key=self._held_by)
            self._holding[key] = self._holding.get(key, 0) + 1
            self._queued[lane].append(record)
        self.read_through = max(self.read_through, read_through)

    def _held_by(self, lane: int) -> int:
        return len(self._queued[lane]) + len(self._in_flight[lane] or ())

    def next_chunks(self, limit: int) -> list[Chunk[R]]:
        """The chunks to start now, each of at most ``limit`` records, their lanes now in
        flight.

        Idle lanes with records queued are taken oldest record first and grouped until a
        group holds a lane's share of the records a partition queues ahead (``limit // (2 *
        lanes)``, the projector queuing about ``limit``): a behind partition gets one chunk per
        lane, side by side; a group short of its share starts only when no chunk of the
        partition is in flight (it waits for one to commit and goes with what came meanwhile),
        so a caught-up partition applies everything in one chunk at a time, as with one lane.
        With nothing queued or in flight but undecodable records read since the last stored
        offset, an empty chunk on lane 0 only moves the offset past them."""
        share = max(1, limit // (2 * self.lanes))
        busy = any(chunk is not None for chunk in self._in_flight)
        waiting = sorted(
            (lane for lane in range(self.lanes) if self._idle_with_records(lane)),
            key=lambda lane: self._queued[lane][0].offset,
        )
        chunks: list[Chunk[R]] = []
        group: list[int] = []
        count = 0
        for lane in waiting:
            group.append(lane)
            count += len(self._queued[lane])
            if count >= share:
                chunks.append(self._take(group, limit))
                group, count, busy = [], 0, True
        if group and not busy:
            chunks.append(self._take(group, limit))
        elif not chunks and not busy and self._undecodable_only():
            self._in_flight[0] = []
            chunks.append(Chunk((0,), []))
        return chunks

    def _idle_with_records(self, lane: int) -> bool:
        return self._in_flight[lane] is None and bool(self._queued[lane])

    def _undecodable_only(self) -> bool:
        return not any(self._queued) and self.read_through + 1 > max(self.stored, 0)

    def _take(self, lanes: list[int], limit: int) -> Chunk[R]:
        taken: list[R] = []
        for lane in lanes:
            queue = self._queued[lane]
            mine = [queue.popleft() for _ in range(min(limit - len(taken), len(queue)))]
            self._in_flight[lane] = mine
            taken += mine
        if len(lanes) > 1:
            taken.sort(key=lambda record: record.offset)
        return Chunk(tuple(lanes), taken)

    def safe_offset(self, chunk: Chunk[R]) -> int:
        """The offset the partition may store with ``chunk``: below every record that another
        chunk holds or that any lane has queued; with none, one past the last offset read."""
        lowest = self._lowest_unsettled(besides=chunk.lanes)
        self._offered[chunk.lanes] = lowest
        return lowest

    def settled_offset(self) -> int:
        """With no chunk in flight, the offset the partition may store: below its first
        queued record, or one past the last offset read."""
        if any(chunk is not None for chunk in self._in_flight):
            raise RuntimeError("a settled offset needs every chunk of the partition finished")
        return self._lowest_unsettled(besides=())

    def _lowest_unsettled(self, *, besides: tuple[int, ...]) -> int:
        """The first offset queued on any lane or in flight on a lane not in ``besides``; with
        none, one past the last offset read."""
        lowest = self.read_through + 1
        for lane in range(self.lanes):
            queued = self._queued[lane]
            if queued:
                lowest = min(lowest, queued[0].offset)
            in_flight = self._in_flight[lane]
            if in_flight and lane not in besides:
                lowest = min(lowest, in_flight[0].offset)
        return lowest

    def committed(self, chunk: Chunk[R]) -> None:
        """``chunk`` has committed: its records leave the books (a principal with none left
        may go to another lane next time), and the offset it stored (the last
        :meth:`safe_offset` given it) counts as stored."""
        for record in chunk.records:
            key = record.lane_key
            left = self._holding[key] - 1
            if left:
                self._holding[key] = left
            else:
                del self._holding[key], self._lane_of[key]
        for lane in chunk.lanes:
            self._in_flight[lane] = None
        self.stored = max(self.stored, self._offered.pop(chunk.lanes, -1))

    def queued(self) -> int:
        """Records queued and not yet taken, over every lane."""
        return sum(len(queue) for queue in self._queued)
