"""Recording read episodes as pending in the backlog, a chunk per statement (group commit).

The watermark is honest only if an episode is in the backlog as ``pending`` before its claims
batch can be projected, so formation waits for that row. One round trip per episode cost
about as much as everything else the agent does for it (a fetch, then the pool's reset
statement when the connection went back). So records are grouped instead: what arrives while
one statement is in flight goes out together in the next. faust hands over the records of a
fetched chunk without yielding in between, so a chunk is usually one statement.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence

from engram.watermarks.backlog import BacklogEntry, Position

IDLE_TURNS = 8
WriteMany = Callable[[Sequence[BacklogEntry]], Awaitable[Mapping[Position, int]]]


class PendingRecorder:
    """``record`` queues an entry and returns a future of its failed attempts so far; one task
    writes whatever is queued, one statement at a time, until nothing is left."""

    def __init__(self, write_many: WriteMany, *, max_group: int = 500):
        self._write_many = write_many
        self._max_group = max_group
        self._queued: dict[Position, tuple[BacklogEntry, list[asyncio.Future[int]]]] = {}
        self._writer: asyncio.Task[None] | None = None
        self.statements = 0
        """Statements written so far: how well records were grouped (records / statements)."""
        self.records = 0
        """Records written so far."""

    def record(self, entry: BacklogEntry) -> asyncio.Future[int]:
        """Queue ``entry``; the future resolves once its row is committed. A position queued
        twice (redelivered across a rebalance) is written once and both futures get its row."""
        future: asyncio.Future[int] = asyncio.get_running_loop().create_future()
        position = (entry.topic, entry.partition, entry.offset)
        self._queued.setdefault(position, (entry, []))[1].append(future)
        if self._writer is None or self._writer.done():
            self._writer = asyncio.create_task(self._write_queued(), name="backlog.pending")
        return future

    async def _write_queued(self) -> None:
        while self._queued:
            await self._let_the_reader_catch_up()
            group = self._take_group()
            try:
                attempts = await self._write_many([entry for entry, _ in group.values()])
            except asyncio.CancelledError as error:
                _fail(group.values(), error)
                raise
            except Exception as error:  # not an outage (those are retried): each waiter's error
                _fail(group.values(), error)
                continue
            self.statements += 1
            self.records += len(group)
            for position, (_, futures) in group.items():
                for future in futures:
                    if not future.done():
                        future.set_result(attempts[position])

    def _take_group(self) -> dict[Position, tuple[BacklogEntry, list[asyncio.Future[int]]]]:
        """The oldest ``max_group`` queued records (dicts keep insertion order)."""
        if len(self._queued) <= self._max_group:
            group, self._queued = self._queued, {}
            return group
        positions = list(self._queued)[: self._max_group]
        return {position: self._queued.pop(position) for position in positions}

    async def _let_the_reader_catch_up(self) -> None:
        """Yield to the event loop while records keep coming, up to ``max_group``: a burst
        becomes one statement, while a record that arrives alone is written at once.

        faust hands the agent one record per few turns of the loop (each record passes through
        tasks of its own), so "still coming" means: more were queued within the last
        ``IDLE_TURNS`` turns. Those turns cost microseconds when nothing else is ready."""
        queued, idle = len(self._queued), 0
        while idle < IDLE_TURNS and len(self._queued) < self._max_group:
            await asyncio.sleep(0)
            idle = idle + 1 if len(self._queued) == queued else 0
            queued = len(self._queued)

    async def close(self) -> None:
        """Stop writing (shutdown): waiting formations are cancelled with their lanes."""
        if self._writer is not None and not self._writer.done():
            self._writer.cancel()
            await asyncio.gather(self._writer, return_exceptions=True)
        _fail(self._queued.values(), asyncio.CancelledError())
        self._queued.clear()


def _fail(
    waiting: Iterable[tuple[BacklogEntry, list[asyncio.Future[int]]]], error: BaseException
) -> None:
    for _, futures in waiting:
        for future in futures:
            if future.done():
                continue
            if isinstance(error, asyncio.CancelledError):
                future.cancel()
            else:
                future.set_exception(error)
