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
from typing import Generic, Protocol, TypeVar


class LaneRecord(Protocol):
    """What the books need of a record: its offset, and whose it is."""

    @property
    def offset(self) -> int: ...

    @property
    def lane_key(self) -> bytes: ...


R = TypeVar("R", bound=LaneRecord)


class PartitionLanes(Generic[R]):
    """The fetched records of one partition not yet committed, by lane: queued (not taken
    yet) and in flight (taken by the lane's chunk, until it commits)."""

    def __init__(self, lanes: int) -> None:
        if lanes < 1:
            raise ValueError(f"a partition needs at least one lane, not {lanes}")
        self.lanes = lanes
        self._queued: list[deque[R]] = [deque() for _ in range(lanes)]
        self._in_flight: list[list[R] | None] = [None] * lanes
        self._offered = [-1] * lanes
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

    def take(self, lane: int, limit: int) -> list[R]:
        """Up to ``limit`` of ``lane``'s queued records, now its chunk in flight (an empty one
        when only the stored offset has to move past undecodable records: :meth:`ready`)."""
        if self._in_flight[lane] is not None:
            raise RuntimeError(f"lane {lane} already has a chunk in flight")
        queue = self._queued[lane]
        chunk = [queue.popleft() for _ in range(min(limit, len(queue)))]
        self._in_flight[lane] = chunk
        return chunk

    def safe_offset(self, lane: int) -> int:
        """The offset the partition may store with ``lane``'s chunk: below every record that
        another chunk holds or that any lane has queued; with none, one past the last offset
        read."""
        lowest = self.read_through + 1
        for other in range(self.lanes):
            queued = self._queued[other]
            if queued:
                lowest = min(lowest, queued[0].offset)
            in_flight = self._in_flight[other]
            if other != lane and in_flight:
                lowest = min(lowest, in_flight[0].offset)
        self._offered[lane] = lowest
        return lowest

    def settled_offset(self) -> int:
        """With no chunk in flight, the offset the partition may store: below its first
        queued record, or one past the last offset read."""
        if any(chunk is not None for chunk in self._in_flight):
            raise RuntimeError("a settled offset needs every chunk of the partition finished")
        firsts = [queue[0].offset for queue in self._queued if queue]
        return min([*firsts, self.read_through + 1])

    def committed(self, lane: int) -> None:
        """``lane``'s chunk has committed: its records leave the books (a principal with none
        left may go to another lane next time), and the offset it stored (the last
        :meth:`safe_offset` given it) counts as stored."""
        for record in self._in_flight[lane] or ():
            key = record.lane_key
            left = self._holding[key] - 1
            if left:
                self._holding[key] = left
            else:
                del self._holding[key], self._lane_of[key]
        self._in_flight[lane] = None
        self.stored = max(self.stored, self._offered[lane])

    def ready(self) -> list[int]:
        """Lanes with records queued and no chunk in flight; or, with nothing queued or in
        flight anywhere but the last offsets read undecodable, lane 0 (its chunk is empty and
        only moves the stored offset past them)."""
        ready = [
            lane
            for lane in range(self.lanes)
            if self._queued[lane] and self._in_flight[lane] is None
        ]
        if not ready and self._idle() and self.read_through + 1 > max(self.stored, 0):
            return [0]
        return ready

    def _idle(self) -> bool:
        return not any(self._queued) and all(chunk is None for chunk in self._in_flight)

    def queued(self) -> int:
        """Records queued and not yet taken, over every lane."""
        return sum(len(queue) for queue in self._queued)
