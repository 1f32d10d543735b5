"""Key lanes: items with the same key are handled one at a time, in submission order, while
items with different keys run concurrently — so one project waiting on a slow model never
stalls the other projects of its partition.

A lane is a queue and one task; it ends when its queue is empty, so idle projects cost
nothing. The total number of unfinished items is bounded: ``submit`` waits for room, which
pushes back on the consumer instead of buffering without limit.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Generic, TypeVar

import structlog

log = structlog.get_logger(__name__)

T = TypeVar("T")


class KeyLanes(Generic[T]):
    def __init__(self, handle: Callable[[T], Awaitable[None]], *, max_in_flight: int):
        self._handle = handle
        self._room = asyncio.Semaphore(max_in_flight)
        self._queues: dict[str, asyncio.Queue[T]] = {}
        self._tasks: dict[str, asyncio.Task[None]] = {}
        self._unfinished = 0
        self._idle = asyncio.Event()
        self._idle.set()

    async def submit(self, key: str, item: T) -> None:
        await self._room.acquire()
        self._unfinished += 1
        self._idle.clear()
        queue = self._queues.get(key)
        if queue is None:
            queue = self._queues[key] = asyncio.Queue()
            self._tasks[key] = asyncio.create_task(self._run(key, queue), name=f"lane:{key}")
        queue.put_nowait(item)

    async def _run(self, key: str, queue: asyncio.Queue[T]) -> None:
        try:
            while not queue.empty():
                item = queue.get_nowait()
                try:
                    await self._handle(item)
                except asyncio.CancelledError:
                    raise
                except Exception:
                    # The handler owns failure; reaching here is a bug. The item stays
                    # unfinished, so offsets cannot pass it and readiness reports the stall.
                    log.exception("lane.handler_failed", key=key)
                finally:
                    self._room.release()
                    self._unfinished -= 1
                    if self._unfinished == 0:
                        self._idle.set()
                if not queue.empty():
                    # An item whose awaits are all ready (a deterministic turn whose backlog row
                    # is committed) never suspends: yield before the next, or a long lane would
                    # hold the event loop and starve the consumer, the producer and heartbeats.
                    await asyncio.sleep(0)
        finally:
            if self._queues.get(key) is queue and queue.empty():
                del self._queues[key]
                del self._tasks[key]

    @property
    def unfinished(self) -> int:
        return self._unfinished

    @property
    def active_keys(self) -> int:
        return len(self._tasks)

    async def wait_idle(self) -> None:
        await self._idle.wait()

    async def close(self) -> None:
        """Cancel every lane (shutdown): an attempt cut short is not counted as a failure."""
        tasks = list(self._tasks.values())
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        self._queues.clear()
        self._tasks.clear()
