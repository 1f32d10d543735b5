"""Acknowledging episodes strictly in log order, whatever order they finish in.

Projects that share a partition form concurrently, so episodes finish out of order. faust
commits the offset of acknowledged events, and its handling of gaps between acknowledgements
has committed past in-flight events (faust-streaming issue 606). So faust is only ever told
about a prefix: an episode is acknowledged once it and every earlier episode of its partition
have finished, and the committed offset can never pass the lowest unfinished episode.
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Generic, TypeVar

T = TypeVar("T")


@dataclass
class _Slot(Generic[T]):
    offset: int
    item: T
    finished: bool = False


class ContiguousAcks(Generic[T]):
    """Per partition, a queue of in-flight items in log order; ``ack`` runs on the prefix."""

    def __init__(self, ack: Callable[[T], object]):
        self._ack = ack
        self._partitions: dict[int, deque[_Slot[T]]] = {}
        self._by_offset: dict[tuple[int, int], _Slot[T]] = {}

    def track(self, partition: int, offset: int, item: T) -> None:
        """Register an item as it is read; items of one partition arrive in offset order."""
        slots = self._partitions.setdefault(partition, deque())
        if slots and slots[-1].offset >= offset:
            raise ValueError(f"partition {partition}: offset {offset} after {slots[-1].offset}")
        slot = _Slot(offset, item)
        slots.append(slot)
        self._by_offset[(partition, offset)] = slot

    def finish(self, partition: int, offset: int) -> int:
        """Mark one item finished; acknowledge every finished item at the head. Returns how
        many were acknowledged now."""
        slot = self._by_offset.get((partition, offset))
        if slot is None:
            return 0  # forgotten on revocation: the new owner of the partition re-reads it
        slot.finished = True
        slots = self._partitions[partition]
        acked = 0
        while slots and slots[0].finished:
            head = slots.popleft()
            del self._by_offset[(partition, head.offset)]
            self._ack(head.item)
            acked += 1
        return acked

    def forget(self, partition: int) -> None:
        """Drop a revoked partition's in-flight items without acknowledging them."""
        for slot in self._partitions.pop(partition, deque()):
            self._by_offset.pop((partition, slot.offset), None)

    def lowest_unfinished(self, partition: int) -> int | None:
        slots = self._partitions.get(partition)
        return slots[0].offset if slots else None

    @property
    def in_flight(self) -> int:
        return len(self._by_offset)


R = TypeVar("R")


class InOrderRelease(Generic[R]):
    """Releases results in the order their records were read, per key, asynchronously.

    Formation runs concurrently per project, but one principal's claims batches must reach the
    claims topic in log order, or replaying the same log could resolve them in another order.
    A result waits here until every earlier record of the same key (partition and principal)
    has a result too; then the run of ready results is released, in order.
    """

    def __init__(self, release: Callable[[R], Awaitable[None]]):
        self._release = release
        self._queues: dict[object, deque[list[object]]] = {}
        self._locks: dict[object, asyncio.Lock] = {}

    def reserve(self, key: object, offset: int) -> None:
        self._queues.setdefault(key, deque()).append([offset, _PENDING])

    async def complete(self, key: object, offset: int, result: R) -> None:
        queue = self._queues[key]
        for slot in queue:
            if slot[0] == offset:
                slot[1] = result
                break
        else:
            raise KeyError(f"{key}: offset {offset} was never reserved")
        lock = self._locks.setdefault(key, asyncio.Lock())
        async with lock:
            while queue and queue[0][1] is not _PENDING:
                _, ready = queue[0]
                await self._release(ready)  # type: ignore[arg-type]
                queue.popleft()
            # Only forget the key if it still names this queue: a later reserve may already
            # have started a new queue (and lock) for it while this one was draining.
            if not queue and self._queues.get(key) is queue:
                del self._queues[key]
                if self._locks.get(key) is lock:
                    del self._locks[key]

    def pending(self, key: object) -> int:
        return len(self._queues.get(key, ()))


_PENDING = object()
