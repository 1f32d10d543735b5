"""The belief projector: a plain aiokafka consumer of ``engram.claims``.

Offsets are owned by PostgreSQL, not by the consumer group: on every assignment the consumer
seeks to the offsets stored beside the beliefs, and each chunk advances its offset in the same
transaction as its rows. Kafka's committed offsets are written too, but only as a lag gauge.

Lanes, and what they may not do: a partition's records are split by principal into lanes
(:mod:`projections.beliefs.lanes`), and every lane of every partition applies one chunk at a time, in
offset order, in its own transaction, as soon as its last chunk has committed — so while one
lane's statements run in PostgreSQL, another's chunk is resolved here, and the two cores work
at once instead of taking turns. A chunk's resolution reads only the rows of its own
principals, which no other lane writes; a chunk stores only an offset below every record still
unsettled in its partition. State resolved from is never carried over from one chunk to the
next in memory: every chunk loads what it consults inside its own transaction, so a failed
chunk, a rebalance, a rewind, a correction or a writer outside the projector cannot leave a
stale copy behind. Fetching runs ahead of the lanes by a bounded number of records.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable
from functools import partial

import asyncpg
import structlog
from aiokafka import (
    AIOKafkaConsumer,
    AIOKafkaProducer,
    ConsumerRecord,
    TopicPartition,
)
from aiokafka.errors import KafkaError, MessageSizeTooLargeError, RecordTooLargeError
from pydantic import ValidationError

from engram.infra.db import (
    DATABASE_BACKOFF,
    UNAVAILABLE,
    report_unavailable,
    retry_while_unavailable,
)
from engram.infra.metrics import BATCHES_PROJECTED, DEAD_LETTERS, EPISODES_PARKED
from engram.infra.settings import KafkaSettings, WorkerSettings
from engram.projections.beliefs.lanes import Chunk, PartitionLanes
from engram.projections.beliefs.memory_events import OutboxPublisher, QueuedPayloads, drain_outbox
from engram.projections.beliefs.quarantine import (
    UNDECODABLE_KIND,
    UNPROJECTABLE,
    Quarantined,
    dead_letter_headers,
    describe,
    set_aside,
)
from engram.projections.beliefs.store import (
    ClaimsRecord,
    advance_offset,
    project_records,
    stored_offsets,
)
from engram.projections.following import SeekToStoredOffsets
from engram.resolution.chunk import BatchOutcome
from engram.schemas.claims import decode_claims_batch
from engram.schemas.sealed import SealedClaimsBatch, is_sealed_claims
from engram.sealing.events import NoKeys, Sealer

log = structlog.get_logger(__name__)

DEFAULT_LANES: int = WorkerSettings.model_fields["projector_lanes"].default
"""Lanes per claims partition (``ENGRAM_WORKER_PROJECTOR_LANES``'s default): with two, one chunk is resolved in this process while another's
statements run in PostgreSQL, which keeps both cores of a small machine busy; more split the
chunks again for little more overlap, since this process's one thread is then the limit
(docs/benchmarks.md, session 8)."""

DEFAULT_MAX_CHUNK = 500
"""Records a lane applies in one transaction at most."""

MEMORY_EVENT_BATCH_BYTES = 256 * 1024
"""Producer batch size for memory events: a drain sends up to a thousand (~0.5 KB each) at once,
and at aiokafka's 16 KiB default that is dozens of requests, each waiting for the last."""

_ChunkKey = tuple[TopicPartition, tuple[int, ...]]
"""A chunk in flight: its partition and its lanes (no two chunks in flight share a lane)."""


class BeliefProjector:
    """Consumes claims batches until stopped; one principal's batches stay in order because
    ``engram.claims`` is keyed by tenant/principal, a principal's records of a partition all go
    to one lane, and a lane applies its records in offset order, one chunk at a time."""

    def __init__(
        self,
        settings: KafkaSettings,
        pool: asyncpg.Pool,
        on_outcome: Callable[[BatchOutcome], None] | None = None,
        *,
        max_chunk: int = DEFAULT_MAX_CHUNK,
        lanes: int = DEFAULT_LANES,
        sealer: Sealer | None = None,
    ):
        """``max_chunk`` bounds the records a lane applies in one transaction (and so what a
        kill or a failed chunk makes the next run apply again); ``lanes`` is the number of
        lanes per partition (1: a partition's chunks one after the other)."""
        if lanes < 1:
            raise ValueError(f"a projector needs at least one lane per partition, not {lanes}")
        self._settings = settings
        self._sealer: Sealer = sealer or NoKeys()
        self._max_chunk = max_chunk
        self._lanes = lanes
        self._pool = pool
        self._on_outcome = on_outcome
        self._stopping = asyncio.Event()
        self.projected = 0
        self.outages = 0
        """Database operations that found PostgreSQL unreachable (each retried after a pause)."""
        self._listener: SeekToStoredOffsets | None = None
        self._unreachable = False
        self._books: dict[TopicPartition, PartitionLanes[ClaimsRecord]] = {}
        """Each partition's records fetched and not yet committed, by lane."""
        self._chunks: dict[_ChunkKey, asyncio.Task[None]] = {}
        """The chunks in flight, by partition and lanes."""
        self._accepting = True
        """Whether lanes may start chunks: not between a failure or revocation and the seek."""
        self._failure: BaseException | None = None
        self._progress = asyncio.Event()
        """Set when a chunk finishes (or the projector is asked to stop): room may have freed."""
        self._publisher: OutboxPublisher | None = None
        self._producer: AIOKafkaProducer | None = None
        """Publishes memory events and the dead letters of batches set aside."""
        self.set_aside = 0
        """Claims batches set aside as unprojectable (:mod:`projections.beliefs.quarantine`)."""
        self._queued = QueuedPayloads()
        """Memory events this projector committed and has not yet published, with their JSON."""

    def stop(self) -> None:
        self._stopping.set()
        self._progress.set()

    def readiness(self) -> tuple[bool, str]:
        """Ready once its assignment is positioned at the stored offsets, and not while the
        database is unreachable (it is retrying then, and nothing commits)."""
        if self._listener is None or not self._listener.positioned:
            return False, "partitions not yet assigned and positioned at the stored offsets"
        if self._unreachable:
            return False, "PostgreSQL is unreachable; retrying"
        return True, "ready"

    async def run(self) -> None:
        consumer = AIOKafkaConsumer(
            bootstrap_servers=self._settings.bootstrap,
            group_id=f"{self._settings.group_id}-beliefs",
            enable_auto_commit=False,
            auto_offset_reset="earliest",
            session_timeout_ms=self._settings.session_timeout_ms,
            heartbeat_interval_ms=max(self._settings.session_timeout_ms // 3, 500),
            isolation_level="read_committed",
        )
        claims_topic = self._settings.claims_topic
        listener = self._listener = SeekToStoredOffsets(
            consumer, self._pool, claims_topic, offsets_of=stored_offsets, on_revoked=self._hold
        )
        consumer.subscribe([claims_topic], listener=listener)
        producer = AIOKafkaProducer(
            bootstrap_servers=self._settings.bootstrap,
            enable_idempotence=True,
            acks="all",
            max_batch_size=MEMORY_EVENT_BATCH_BYTES,
            request_timeout_ms=self._settings.producer_request_timeout_ms,
        )
        await producer.start()
        self._producer = producer
        await consumer.start()
        topic = self._settings.memory_events_topic
        publisher = self._publisher = OutboxPublisher(lambda: self._drain(producer, topic))
        publisher.start()
        outages = 0  # consecutive: the wait doubles while the database stays away
        reseek = False
        try:
            while not self._stopping.is_set():
                try:
                    fetched = await self._consume(consumer, listener, reseek=reseek)
                except UNAVAILABLE as error:
                    # The chunk's transaction rolled back and the consumer has moved past it:
                    # read again from the stored offsets once the database answers.
                    self.outages += 1
                    self._unreachable = True
                    outages += 1
                    delay = DATABASE_BACKOFF.after(outages)
                    report_unavailable("projector.chunk", error, delay)
                    await self._pause(delay)
                    reseek = True
                    continue
                outages, reseek, self._unreachable = 0, False, False
                # Kafka's own offsets are informational (lag); the stored ones are the truth,
                # so a record skipped on stop is simply read again after the next seek.
                if fetched and not self._stopping.is_set():
                    await self._commit_lag_gauge(consumer)
            try:
                await self._settle(store_settled=True)
            except UNAVAILABLE as error:  # read again after the next start's seek
                self.outages += 1
                report_unavailable("projector.chunk", error, 0)
        except BaseException:
            # Cancelled, or failed: what did not commit is read again after the next seek.
            self._abandon_in_flight()
            publisher.abandon()
            raise
        finally:
            try:
                await publisher.close()
            finally:
                self._publisher = self._producer = None
                await consumer.stop()
                await producer.stop()

    async def _consume(
        self, consumer: AIOKafkaConsumer, listener: SeekToStoredOffsets, *, reseek: bool
    ) -> bool:
        """Fetch once and queue each partition's records on its lanes; whether anything was
        fetched and kept.

        Chunks start by themselves (:meth:`_start_ready`), as records arrive and as chunks
        commit; this only keeps the books filled, about ``max_chunk`` records queued per
        partition ahead of them (with at most ``lanes * max_chunk`` in flight). A chunk that
        failed raises here; the caller then settles the others and reads again from the stored
        offsets. Should a principal's batches ever sit in two partitions (the topic's partition
        count raised), two chunks naming it wait for each other in PostgreSQL (its lock, taken
        first in each chunk's transaction)."""
        if reseek or listener.seek_pending:
            await self._settle()
            await listener.reseek()
        self._raise_failure()
        await self._room_to_fetch()
        self._raise_failure()
        if self._stopping.is_set():
            return False
        generation = listener.generation
        fetched = await consumer.getmany(timeout_ms=200, max_records=self._max_chunk)
        if listener.moved_since(generation):
            # Fetched across a rebalance, possibly from before its seek: drop it and read
            # again from the stored offsets, the truth.
            await self._settle()
            await listener.reseek()
            return False
        if self._stopping.is_set():
            return bool(fetched)
        for tp, records in fetched.items():
            books = self._books.get(tp)
            if books is None:
                books = self._books[tp] = PartitionLanes(self._lanes)
            books.add(await self._decode(tp, records), read_through=records[-1].offset)
        self._start_ready()
        return bool(fetched)

    async def _room_to_fetch(self) -> None:
        """Wait while a partition has ``max_chunk`` records queued, until a chunk finishes.

        Not while lanes are held (a revocation, a failure): no chunk starts then, so no queue
        empties; the fetch goes ahead, and the loop finds the move or the failure and
        settles."""
        while (
            self._accepting
            and not self._stopping.is_set()
            and self._failure is None
            and any(books.queued() >= self._max_chunk for books in self._books.values())
        ):
            self._progress.clear()
            await self._progress.wait()

    def _start_ready(self) -> None:
        """Start every chunk the books have ready (:meth:`PartitionLanes.next_chunks`)."""
        if not self._accepting or self._failure is not None or self._stopping.is_set():
            return
        for tp, books in self._books.items():
            for chunk in books.next_chunks(self._max_chunk):
                key = (tp, chunk.lanes)
                task = asyncio.create_task(self._apply(tp, books, chunk))
                self._chunks[key] = task
                task.add_done_callback(partial(self._finished, key))

    def _finished(self, key: _ChunkKey, task: asyncio.Task[None]) -> None:
        """A chunk is done: start what is ready now, or keep what made it fail for the consume
        loop (its records stay in the books, in flight, so no other chunk of the partition
        stores an offset past them)."""
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

    def _hold(self) -> None:
        """Start no new chunk until the consume loop has settled and sought again (the
        partitions are being revoked)."""
        self._accepting = False

    def _abandon_in_flight(self) -> None:
        chunks, self._chunks, self._books = self._chunks, {}, {}
        for task in chunks.values():
            if task.done():
                if not task.cancelled() and task.exception() is not None:
                    log.warning("projector.chunk_abandoned", error=repr(task.exception()))
            else:
                task.cancel()

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
            for tp, lanes in books.items():
                settled = lanes.settled_offset()
                if settled > lanes.stored:
                    async with self._pool.acquire() as conn:
                        await advance_offset(
                            conn, topic=tp.topic, partition=tp.partition, next_offset=settled
                        )

    async def _pause(self, seconds: float) -> None:
        """Back off, but end the pause as soon as the projector is asked to stop."""
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._stopping.wait(), timeout=seconds)

    async def _drain(self, producer: AIOKafkaProducer, topic: str) -> int:
        """Publish pending memory events (how many); while the database or the broker is
        unreachable they wait in the outbox for a later drain."""
        try:
            return await drain_outbox(self._pool, producer, topic, self._queued)
        except UNAVAILABLE as error:
            self.outages += 1
            report_unavailable("projector.outbox", error, 0)
        except KafkaError as error:
            log.warning("projector.memory_events_unpublished", error=type(error).__name__)
        return 0

    async def _commit_lag_gauge(self, consumer: AIOKafkaConsumer) -> None:
        """Commit positions to Kafka so lag tools see progress; a failure (a rebalance in
        progress, say) loses nothing, because the stored offsets decide where reading resumes."""
        try:
            await consumer.commit()
        except KafkaError as error:
            log.info("projector.kafka_commit_skipped", error=type(error).__name__)

    async def _decode(
        self, tp: TopicPartition, records: list[ConsumerRecord]
    ) -> list[ClaimsRecord]:
        """The records that decode as claims batches. One that does not — the formation agent
        is the topic's only writer, so a bug, or a producer writing where it should not — is
        dead-lettered with the reason and its position before the books take the fetch, so the
        offset the lanes store can never pass it unrecorded."""
        decoded: list[ClaimsRecord] = []
        for record in records:
            try:
                value = record.value or b""
                if is_sealed_claims(value):
                    sealed = SealedClaimsBatch.model_validate_json(value)  # the contract first
                    # kept opened in claims_history, which its readers decode as a batch
                    value = await retry_while_unavailable(
                        partial(self._sealer.open_claims, sealed), what="projector.open"
                    )
                decoded.append(ClaimsRecord(decode_claims_batch(value), record.offset, value))
            except ValidationError as error:
                problem = error.errors()[0]
                where = ".".join(str(part) for part in problem["loc"]) or "value"
                detail = f"{where}: {problem['msg']}"
                log.error(
                    "projector.bad_batch",
                    topic=tp.topic,
                    partition=tp.partition,
                    offset=record.offset,
                    error=detail[:500],
                )
                headers = dead_letter_headers(
                    UNDECODABLE_KIND,
                    detail,
                    topic=tp.topic,
                    partition=tp.partition,
                    offset=record.offset,
                )
                await self._dead_letter(record.value or b"", headers)
        return decoded

    async def _dead_letter(self, value: bytes, headers: list[tuple[str, bytes]]) -> None:
        """Publish a dead letter until Kafka has it (a value Kafka will not take goes without
        it: the headers name where it is in the log), pausing between tries."""
        failures = 0
        assert self._producer is not None, "dead letters are published while the projector runs"
        while True:
            try:
                await self._producer.send_and_wait(self._settings.dlq_topic, value, headers=headers)
            except KafkaError as error:
                if value and isinstance(error, MessageSizeTooLargeError | RecordTooLargeError):
                    value, headers = b"", [*headers, ("engram.value_dropped", b"too large")]
                    continue
                log.warning("projector.dead_letter_retry", error=type(error).__name__)
                failures += 1
                await self._pause(DATABASE_BACKOFF.after(failures))
                if self._stopping.is_set():
                    # Stopping with Kafka away: leave the record unsettled (its chunk is
                    # abandoned, not failed), to be read and set aside again after a restart.
                    raise asyncio.CancelledError from error
                continue
            DEAD_LETTERS.labels(headers[0][1].decode()).inc()
            return

    async def _apply(
        self, tp: TopicPartition, books: PartitionLanes[ClaimsRecord], chunk: Chunk[ClaimsRecord]
    ) -> None:
        if not chunk.records:  # only undecodable records read since the last commit
            async with self._pool.acquire() as conn:
                await advance_offset(
                    conn,
                    topic=tp.topic,
                    partition=tp.partition,
                    next_offset=books.safe_offset(chunk),
                )
            books.committed(chunk)
            return
        try:
            outcomes = await self._project(
                tp, books, chunk.records, partial(books.safe_offset, chunk)
            )
        except UNPROJECTABLE as error:
            log.error(
                "projector.chunk_refused",
                topic=tp.topic,
                partition=tp.partition,
                first_offset=chunk.records[0].offset,
                records=len(chunk.records),
                error=describe(error),
            )
            outcomes = await self._apply_each(tp, books, chunk)
        books.committed(chunk)
        if self._publisher is not None:
            self._publisher.wake()
        for outcome in outcomes:
            self.projected += 1
            BATCHES_PROJECTED.labels("skipped" if outcome.skipped else "applied").inc()
            if self._on_outcome is not None:
                self._on_outcome(outcome)

    async def _project(
        self,
        tp: TopicPartition,
        books: PartitionLanes[ClaimsRecord],
        records: list[ClaimsRecord],
        store_offset: Callable[[], int],
    ) -> list[BatchOutcome]:
        async with self._pool.acquire() as conn:
            return await project_records(
                conn,
                records,
                topic=tp.topic,
                partition=tp.partition,
                read_through=books.read_through,
                queued=self._queued,
                store_offset=store_offset,
            )

    async def _apply_each(
        self, tp: TopicPartition, books: PartitionLanes[ClaimsRecord], chunk: Chunk[ClaimsRecord]
    ) -> list[BatchOutcome]:
        """A refused chunk again, one record a transaction, each storing an offset below the
        next: what applies alone commits as usual, and a record refused alone is set aside."""
        outcomes: list[BatchOutcome] = []
        records = chunk.records
        for index, record in enumerate(records):
            following = records[index + 1].offset if index + 1 < len(records) else None
            store = partial(_stored_below, books, chunk, following)
            try:
                outcomes += await self._project(tp, books, [record], store)
            except UNPROJECTABLE as error:
                await self._set_aside(tp, record, describe(error), store)
        return outcomes

    async def _set_aside(
        self,
        tp: TopicPartition,
        record: ClaimsRecord,
        reason: str,
        store_offset: Callable[[], int],
    ) -> None:
        """Dead-letter the batch, then park its episode and move past it in one transaction
        (a kill between the two publishes the dead letter again: its headers name the same
        positions, and nothing projected is doubled)."""
        batch = record.batch
        quarantined = Quarantined(tp.topic, tp.partition, record.offset, batch.source, reason)
        log.error(
            "projector.batch_set_aside",
            topic=tp.topic,
            partition=tp.partition,
            offset=record.offset,
            episode=str(batch.episode_id),
            reason=reason,
        )
        await self._dead_letter(record.payload or b"", quarantined.headers())
        async with self._pool.acquire() as conn:
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
