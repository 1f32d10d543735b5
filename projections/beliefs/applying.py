"""The belief projector's sink: claims batches applied by lanes, chunk by chunk, each chunk in
its own transaction with the offset it may store.

A sink of the claims topic's log follower (:mod:`engram.projections.following`) with its own
schedule: the follower fetches, decodes once and hands each partition's records here
(:meth:`BeliefSink.take`), which queues them on the partition's lanes
(:mod:`engram.projections.beliefs.lanes`); every lane of every partition applies one chunk at a time,
in offset order, in its own transaction, as soon as its last chunk has committed — so while
one lane's statements run in PostgreSQL, another's chunk is resolved here, and the two cores
work at once instead of taking turns. A chunk stores only an offset below every record still
unsettled in its partition (:meth:`PartitionLanes.safe_offset`). The follower waits for room
before it fetches (:meth:`BeliefSink.room`: about ``max_chunk`` records queued per partition
ahead of the lanes), and settles every chunk in flight before it seeks (:meth:`BeliefSink.settle`):
a chunk that failed is raised there, and its records are read again from the stored offsets.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from functools import partial

import asyncpg
import structlog

from engram.infra.db import report_unavailable
from engram.infra.metrics import BATCHES_PROJECTED, EPISODES_PARKED
from engram.projections.beliefs.lanes import Chunk, PartitionLanes
from engram.projections.beliefs.memory_events import QueuedPayloads
from engram.projections.beliefs.quarantine import UNPROJECTABLE, Quarantined, describe, set_aside
from engram.projections.beliefs.store import (
    BELIEFS_TRACKING,
    PROJECTOR,
    ClaimsRecord,
    advance_offset,
    project_records,
)
from engram.projections.following import Batch, ScheduledSink
from engram.resolution.chunk import BatchOutcome

log = structlog.get_logger(__name__)

DeadLetter = Callable[[bytes, list[tuple[str, bytes]]], Awaitable[None]]
"""Publishes a dead letter (value, headers) until Kafka has it."""

_ChunkKey = tuple[int, tuple[int, ...]]
"""A chunk in flight: its partition and its lanes (no two chunks in flight share a lane)."""


class BeliefSink(ScheduledSink[ClaimsRecord]):
    """Applies claims batches by lanes; see the module docstring."""

    def __init__(
        self,
        pool: asyncpg.Pool,
        *,
        lanes: int,
        max_chunk: int,
        queued: QueuedPayloads,
        dead_letter: DeadLetter,
        on_outcome: Callable[[BatchOutcome], None] | None = None,
        on_commit: Callable[[], None] = lambda: None,
    ) -> None:
        """``queued`` receives the memory events each chunk commits, ``on_commit`` is told
        after each commit (the outbox drain), ``dead_letter`` publishes a batch set aside."""
        super().__init__(pool, BELIEFS_TRACKING, name=PROJECTOR)
        self._lanes = lanes
        self._max_chunk = max_chunk
        self._queued = queued
        self._dead_letter = dead_letter
        self._on_outcome = on_outcome
        self._on_commit = on_commit
        self._books: dict[int, PartitionLanes[ClaimsRecord]] = {}
        """Each partition's records taken and not yet committed, by lane."""
        self._topic = ""
        self._chunks: dict[_ChunkKey, asyncio.Task[None]] = {}
        """The chunks in flight, by partition and lanes."""
        self._accepting = True
        """Whether lanes may start chunks: not between a failure or revocation and the seek."""
        self._failure: BaseException | None = None
        self._stopping = False
        self._progress = asyncio.Event()
        """Set when a chunk finishes (or the follower is asked to stop): room may have freed."""
        self.projected = 0
        self.set_aside = 0
        """Claims batches set aside as unprojectable (:mod:`engram.projections.beliefs.quarantine`)."""

    async def take(self, batch: Batch[ClaimsRecord]) -> None:
        """Queue a partition's records on its lanes and start what is ready. Should a
        principal's batches ever sit in two partitions (the topic's partition count raised),
        two chunks naming it wait for each other in PostgreSQL (its lock, taken first in each
        chunk's transaction)."""
        self._topic = batch.topic
        books = self._books.get(batch.partition)
        if books is None:
            books = self._books[batch.partition] = PartitionLanes(self._lanes)
        books.add(batch.records, read_through=batch.next_offset - 1)
        self._start_ready()

    async def room(self) -> None:
        """Raise what made a chunk fail; else wait while a partition has ``max_chunk`` records
        queued, until a chunk finishes (with at most ``lanes * max_chunk`` in flight).

        Not while lanes are held (a revocation, a failure): no chunk starts then, so no queue
        empties; the fetch goes ahead, and the follower finds the move or the failure and
        settles."""
        self._raise_failure()
        while (
            self._accepting
            and not self._stopping
            and self._failure is None
            and any(books.queued() >= self._max_chunk for books in self._books.values())
        ):
            self._progress.clear()
            await self._progress.wait()
        self._raise_failure()

    async def settle(self) -> None:
        await self._settle()

    async def finish(self) -> None:
        await self._settle(store_settled=True)

    def hold(self) -> None:
        """Start no new chunk until the follower has settled and sought again (the
        partitions are being revoked)."""
        self._accepting = False

    def stop(self) -> None:
        self._stopping = True
        self._progress.set()

    def abandon(self) -> None:
        chunks, self._chunks, self._books = self._chunks, {}, {}
        for task in chunks.values():
            if task.done():
                if not task.cancelled() and task.exception() is not None:
                    log.warning("projector.chunk_abandoned", error=repr(task.exception()))
            else:
                task.cancel()

    def report(self, error: BaseException, retry_in_s: float) -> None:
        report_unavailable("projector.chunk", error, retry_in_s)

    def _start_ready(self) -> None:
        """Start every chunk the books have ready (:meth:`PartitionLanes.next_chunks`)."""
        if not self._accepting or self._failure is not None or self._stopping:
            return
        for partition, books in self._books.items():
            for chunk in books.next_chunks(self._max_chunk):
                key = (partition, chunk.lanes)
                task = asyncio.create_task(self._apply(partition, books, chunk))
                self._chunks[key] = task
                task.add_done_callback(partial(self._finished, key))

    def _finished(self, key: _ChunkKey, task: asyncio.Task[None]) -> None:
        """A chunk is done: start what is ready now, or keep what made it fail for the
        follower (its records stay in the books, in flight, so no other chunk of the
        partition stores an offset past them)."""
        if self._chunks.get(key) is task:
            del self._chunks[key]
        self._progress.set()
        if task.cancelled():
            return
        error = task.exception()
        if error is not None:
            if self._failure is None:
                self._failure = error
            return
        self._start_ready()

    def _raise_failure(self) -> None:
        if self._failure is not None:
            failure, self._failure = self._failure, None
            self._accepting = False  # until the books are emptied and the partitions sought
            raise failure

    async def _settle(self, *, store_settled: bool = False) -> None:
        """Wait for every chunk in flight to finish, then forget what is queued (it is read
        again after the next seek), raising what made a chunk fail.

        With ``store_settled`` (a stop), and no chunk failed, first store each partition's
        offset as far as its committed chunks reach: a lane's last commit may have had to
        stop short of another lane's records that committed just after it."""
        self._accepting = False
        while self._chunks:
            await asyncio.gather(*self._chunks.values(), return_exceptions=True)
        books, self._books = self._books, {}
        self._accepting = True
        self._raise_failure()
        if store_settled:
            for partition, lanes in books.items():
                settled = lanes.settled_offset()
                if settled > lanes.stored:
                    async with self.pool.acquire() as conn:
                        await advance_offset(
                            conn, topic=self._topic, partition=partition, next_offset=settled
                        )

    async def _apply(
        self, partition: int, books: PartitionLanes[ClaimsRecord], chunk: Chunk[ClaimsRecord]
    ) -> None:
        if not chunk.records:  # only undecodable records read since the last commit
            async with self.pool.acquire() as conn:
                await advance_offset(
                    conn,
                    topic=self._topic,
                    partition=partition,
                    next_offset=books.safe_offset(chunk),
                )
            books.committed(chunk)
            return
        try:
            outcomes = await self._project(
                partition, books, chunk.records, partial(books.safe_offset, chunk)
            )
        except UNPROJECTABLE as error:
            log.error(
                "projector.chunk_refused",
                topic=self._topic,
                partition=partition,
                first_offset=chunk.records[0].offset,
                records=len(chunk.records),
                error=describe(error),
            )
            outcomes = await self._apply_each(partition, books, chunk)
        books.committed(chunk)
        self._on_commit()
        for outcome in outcomes:
            self.projected += 1
            BATCHES_PROJECTED.labels("skipped" if outcome.skipped else "applied").inc()
            if self._on_outcome is not None:
                self._on_outcome(outcome)

    async def _project(
        self,
        partition: int,
        books: PartitionLanes[ClaimsRecord],
        records: list[ClaimsRecord],
        store_offset: Callable[[], int],
    ) -> list[BatchOutcome]:
        async with self.pool.acquire() as conn:
            return await project_records(
                conn,
                records,
                topic=self._topic,
                partition=partition,
                read_through=books.read_through,
                queued=self._queued,
                store_offset=store_offset,
            )

    async def _apply_each(
        self, partition: int, books: PartitionLanes[ClaimsRecord], chunk: Chunk[ClaimsRecord]
    ) -> list[BatchOutcome]:
        """A refused chunk again, one record a transaction, each storing an offset below the
        next: what applies alone commits as usual, and a record refused alone is set aside."""
        outcomes: list[BatchOutcome] = []
        records = chunk.records
        for index, record in enumerate(records):
            following = records[index + 1].offset if index + 1 < len(records) else None
            store = partial(_stored_below, books, chunk, following)
            try:
                outcomes += await self._project(partition, books, [record], store)
            except UNPROJECTABLE as error:
                await self._set_aside(partition, record, describe(error), store)
        return outcomes

    async def _set_aside(
        self,
        partition: int,
        record: ClaimsRecord,
        reason: str,
        store_offset: Callable[[], int],
    ) -> None:
        """Dead-letter the batch, then park its episode and move past it in one transaction
        (a kill between the two publishes the dead letter again: its headers name the same
        positions, and nothing projected is doubled)."""
        batch = record.batch
        quarantined = Quarantined(self._topic, partition, record.offset, batch.source, reason)
        log.error(
            "projector.batch_set_aside",
            topic=self._topic,
            partition=partition,
            offset=record.offset,
            episode=str(batch.episode_id),
            reason=reason,
        )
        await self._dead_letter(record.payload or b"", quarantined.headers())
        async with self.pool.acquire() as conn:
            if await set_aside(conn, quarantined, next_offset=store_offset()):
                self.set_aside += 1
                EPISODES_PARKED.inc()
                BATCHES_PROJECTED.labels("set_aside").inc()


def _stored_below(
    books: PartitionLanes[ClaimsRecord], chunk: Chunk[ClaimsRecord], following: int | None
) -> int:
    """The offset a record of a chunk applied alone may store: the chunk's safe offset, but
    below the chunk's next record, which has not been applied yet."""
    safe = books.safe_offset(chunk)
    return safe if following is None else min(safe, following)
