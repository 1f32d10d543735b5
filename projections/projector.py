"""The belief projector: a plain aiokafka consumer of ``engram.claims``.

Offsets are owned by PostgreSQL, not by the consumer group: on every assignment the consumer
seeks to the offsets stored beside the beliefs, and each batch advances its offset in the same
transaction as its rows. Kafka's committed offsets are written too, but only as a lag gauge.

Pipelining, and what it may not do: a partition's next chunk is fetched and decoded while its
last one commits, but resolved only after (its resolution reads what the last one wrote), so
within a partition the projector and PostgreSQL take turns. Chunks of *different* partitions
run side by side, each in its own transaction with its own stored offset: they name different
principals, so neither reads what the other writes (see ``BeliefProjector._consume``). State
resolved from is never carried over from one chunk to the next in memory: every chunk loads
what it consults inside its own transaction, so a failed chunk, a rebalance, a rewind, a
correction or a writer outside the projector cannot leave a stale copy behind.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable

import asyncpg
import structlog
from aiokafka import (
    AIOKafkaConsumer,
    AIOKafkaProducer,
    ConsumerRebalanceListener,
    ConsumerRecord,
    TopicPartition,
)
from aiokafka.errors import KafkaError
from pydantic import ValidationError

from engram.shared.db import FIRST_DELAY_S, UNAVAILABLE, next_delay, report_unavailable
from engram.shared.metrics import BATCHES_PROJECTED
from engram.shared.settings import KafkaSettings
from formation.resolution import BatchOutcome
from projections.belief_store import ClaimsRecord, project_records, stored_offsets
from projections.memory_events import OutboxPublisher, QueuedPayloads, drain_outbox
from schemas.claims import decode_claims_batch

log = structlog.get_logger(__name__)

MEMORY_EVENT_BATCH_BYTES = 256 * 1024
"""Producer batch size for memory events: a drain sends up to a thousand (~0.5 KB each) at once,
and at aiokafka's 16 KiB default that is dozens of requests, each waiting for the last."""


async def seek_to_stored_offsets(
    consumer: AIOKafkaConsumer, pool: asyncpg.Pool, topic: str, partitions: set[TopicPartition]
) -> None:
    """Position each partition at the offset stored beside the beliefs (or the beginning)."""
    offsets = await stored_offsets(pool, topic)
    assigned = consumer.assignment()
    for tp in partitions:
        if tp not in assigned:
            continue
        if tp.partition in offsets:
            consumer.seek(tp, offsets[tp.partition])
        else:
            await consumer.seek_to_beginning(tp)


class _SeekToStoredOffsets(ConsumerRebalanceListener):  # type: ignore[misc]
    """Seeks on assignment, and counts rebalances so the consume loop can tell stale records.

    aiokafka installs a new assignment, and may start fetching it from Kafka's committed
    offsets, *before* it awaits this listener. Records returned by a ``getmany`` that overlapped
    a rebalance can therefore come from a position the seek below then replaces: processing them
    would apply claims ahead of earlier ones whenever Kafka's offset is past the stored one (after
    the projection tables were dropped for a replay, for example). ``generation`` moves on every
    revocation and after every assignment, and the loop drops what it fetched across a move.
    """

    def __init__(self, consumer: AIOKafkaConsumer, pool: asyncpg.Pool, topic: str):
        self._consumer = consumer
        self._pool = pool
        self._topic = topic
        self.generation = 0
        self.positioned = False
        self.seek_pending = False

    async def on_partitions_revoked(self, revoked: set[TopicPartition]) -> None:
        self.generation += 1

    async def on_partitions_assigned(self, assigned: set[TopicPartition]) -> None:
        try:
            await seek_to_stored_offsets(self._consumer, self._pool, self._topic, assigned)
        except UNAVAILABLE as error:
            # aiokafka would log this and read on from Kafka's offsets: leave the seek to the
            # consume loop instead, which drops what it fetches until the seek has happened.
            report_unavailable("projector.assign", error, FIRST_DELAY_S)
            self.seek_pending, self.positioned = True, False
        else:
            self.positioned = True
        finally:
            self.generation += 1
        log.info("projector.assigned", partitions=sorted(tp.partition for tp in assigned))

    def moved_since(self, generation: int) -> bool:
        """Whether records fetched while ``generation`` was current may predate a seek."""
        return not self.positioned or self.generation != generation

    async def reseek(self) -> None:
        """Seek every assigned partition to its stored offset: after a chunk whose transaction
        failed, after a stale fetch, or after an assignment whose own seek failed."""
        await seek_to_stored_offsets(
            self._consumer, self._pool, self._topic, self._consumer.assignment()
        )
        if self.seek_pending:
            self.seek_pending, self.positioned = False, True


class BeliefProjector:
    """Consumes claims batches until stopped; one principal's batches stay in order because
    ``engram.claims`` is keyed by tenant/principal and a partition is processed in order."""

    def __init__(
        self,
        settings: KafkaSettings,
        pool: asyncpg.Pool,
        on_outcome: Callable[[BatchOutcome], None] | None = None,
        *,
        max_chunk: int = 500,
    ):
        """``max_chunk`` bounds the records applied in one transaction (and so what a kill or
        a failed chunk makes the next run apply again)."""
        self._settings = settings
        self._max_chunk = max_chunk
        self._pool = pool
        self._on_outcome = on_outcome
        self._stopping = asyncio.Event()
        self.projected = 0
        self.outages = 0
        """Database operations that found PostgreSQL unreachable (each retried after a pause)."""
        self._listener: _SeekToStoredOffsets | None = None
        self._unreachable = False
        self._in_flight: dict[TopicPartition, asyncio.Task[None]] = {}
        self._principals: dict[TopicPartition, set[tuple[str, str]]] = {}
        """The principals of each partition's chunk in flight."""
        self._publisher: OutboxPublisher | None = None
        self._queued = QueuedPayloads()
        """Memory events this projector committed and has not yet published, with their JSON."""

    def stop(self) -> None:
        self._stopping.set()

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
        listener = self._listener = _SeekToStoredOffsets(consumer, self._pool, claims_topic)
        consumer.subscribe([claims_topic], listener=listener)
        producer = AIOKafkaProducer(
            bootstrap_servers=self._settings.bootstrap,
            enable_idempotence=True,
            acks="all",
            max_batch_size=MEMORY_EVENT_BATCH_BYTES,
            request_timeout_ms=self._settings.producer_request_timeout_ms,
        )
        await producer.start()
        await consumer.start()
        topic = self._settings.memory_events_topic
        publisher = self._publisher = OutboxPublisher(lambda: self._drain(producer, topic))
        publisher.start()
        delay = FIRST_DELAY_S
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
                    report_unavailable("projector.chunk", error, delay)
                    await self._pause(delay)
                    delay, reseek = next_delay(delay), True
                    continue
                delay, reseek, self._unreachable = FIRST_DELAY_S, False, False
                # Kafka's own offsets are informational (lag); the stored ones are the truth,
                # so a record skipped on stop is simply read again after the next seek.
                if fetched and not self._stopping.is_set():
                    await self._commit_lag_gauge(consumer)
            try:
                await self._settle()
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
                self._publisher = None
                await consumer.stop()
                await producer.stop()

    async def _consume(
        self, consumer: AIOKafkaConsumer, listener: _SeekToStoredOffsets, *, reseek: bool
    ) -> bool:
        """Fetch once and project each partition's records as one chunk; whether anything was
        fetched and kept.

        One chunk per partition is in flight at a time: while its statements run in
        PostgreSQL, this fetches and decodes the partition's next one, then waits for that
        chunk's commit before applying the next (whose resolution reads what it wrote).
        Chunks of different partitions run side by side, each in its own transaction on its
        own connection: a principal's batches are all in one partition (``engram.claims`` is
        keyed by tenant/principal), so one partition's resolution never reads what another's
        writes, and while one chunk's statements run in PostgreSQL another's resolution runs
        here. Should a principal's batches ever sit in two partitions (the topic's partition
        count raised), a chunk naming a principal that another chunk in flight names waits
        for that chunk's commit first. A chunk that fails raises here, before anything fetched after it in its
        partition is applied; the caller then settles the others and reads again from the
        stored offsets."""
        if reseek or listener.seek_pending:
            await self._settle()
            await listener.reseek()
        generation = listener.generation
        fetched = await consumer.getmany(timeout_ms=200, max_records=self._max_chunk)
        for tp, records in fetched.items():
            decoded = self._decode(tp, records)
            principals = {(r.batch.tenant, r.batch.principal) for r in decoded}
            await self._settle(tp, *(p for p, n in self._principals.items() if n & principals))
            if listener.moved_since(generation):
                # Fetched across a rebalance, possibly from before its seek: drop the rest and
                # read again from the stored offsets, the truth.
                await self._settle()
                await listener.reseek()
                return False
            if self._stopping.is_set():
                break
            self._in_flight[tp] = asyncio.create_task(
                self._apply(tp, decoded, read_through=records[-1].offset)
            )
            self._principals[tp] = principals
        return bool(fetched)

    def _abandon_in_flight(self) -> None:
        in_flight, self._in_flight, self._principals = self._in_flight, {}, {}
        for task in in_flight.values():
            if task.done():
                if not task.cancelled() and task.exception() is not None:
                    log.warning("projector.chunk_abandoned", error=repr(task.exception()))
            else:
                task.cancel()

    async def _settle(self, *partitions: TopicPartition) -> None:
        """Wait for the chunks in flight of ``partitions`` (default: of every partition) to
        commit, raising what made one fail once all of them have finished."""
        chosen = list(partitions or self._in_flight)
        for tp in chosen:
            self._principals.pop(tp, None)
        tasks = [task for tp in chosen if (task := self._in_flight.pop(tp, None)) is not None]
        results = await asyncio.gather(*tasks, return_exceptions=True)
        for result in results:
            if isinstance(result, BaseException):
                raise result

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

    def _decode(self, tp: TopicPartition, records: list[ConsumerRecord]) -> list[ClaimsRecord]:
        decoded: list[ClaimsRecord] = []
        for record in records:
            try:
                value = record.value or b""
                decoded.append(ClaimsRecord(decode_claims_batch(value), record.offset, value))
            except ValidationError as error:
                # The formation agent is the only writer of this topic; a bad record here is a
                # bug, logged loudly and passed over so the principal's later batches project.
                log.error(
                    "projector.bad_batch",
                    topic=tp.topic,
                    partition=tp.partition,
                    offset=record.offset,
                    error=str(error)[:500],
                )
        return decoded

    async def _apply(
        self, tp: TopicPartition, decoded: list[ClaimsRecord], *, read_through: int
    ) -> None:
        async with self._pool.acquire() as conn:
            outcomes = await project_records(
                conn,
                decoded,
                topic=tp.topic,
                partition=tp.partition,
                read_through=read_through,
                queued=self._queued,
            )
        if self._publisher is not None:
            self._publisher.wake()
        for outcome in outcomes:
            self.projected += 1
            BATCHES_PROJECTED.labels("skipped" if outcome.skipped else "applied").inc()
            if self._on_outcome is not None:
                self._on_outcome(outcome)
