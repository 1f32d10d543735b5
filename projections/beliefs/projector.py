"""The belief projector: the claims topic's log follower with the belief sink behind it.

Offsets are owned by PostgreSQL, not by the consumer group: the follower
(:mod:`engram.projections.following`) seeks to the offsets stored beside the beliefs on every
assignment, and each chunk advances its offset in the same transaction as its rows. Kafka's
committed offsets are written too, but only as a lag gauge.

Lanes, and what they may not do: a partition's records are split by principal into lanes
(:mod:`engram.projections.beliefs.lanes`), and every lane of every partition applies one chunk at a
time, in offset order, in its own transaction, as soon as its last chunk has committed
(:mod:`engram.projections.beliefs.applying`, the sink). A chunk's resolution reads only the rows of its
own principals, which no other lane writes; a chunk stores only an offset below every record
still unsettled in its partition. State resolved from is never carried over from one chunk to
the next in memory: every chunk loads what it consults inside its own transaction, so a failed
chunk, a rebalance, a rewind, a correction or a writer outside the projector cannot leave a
stale copy behind. Fetching runs ahead of the lanes by a bounded number of records.

This module is what the sink does not: decoding the claims batches (once, opening sealed
ones; an undecodable record is dead-lettered before the lanes take the fetch), publishing
memory events from the outbox, and the dead letters.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from functools import partial

import asyncpg
import structlog
from aiokafka import AIOKafkaProducer, ConsumerRecord, TopicPartition
from aiokafka.errors import KafkaError, MessageSizeTooLargeError, RecordTooLargeError
from pydantic import ValidationError

from engram.infra.backoff import pause_unless
from engram.infra.db import (
    DATABASE_BACKOFF,
    UNAVAILABLE,
    report_unavailable,
    retry_while_unavailable,
)
from engram.infra.metrics import DEAD_LETTERS
from engram.infra.retry import Retrying, retry
from engram.infra.settings import KafkaSettings, WorkerSettings
from engram.projections.beliefs.applying import BeliefSink
from engram.projections.beliefs.memory_events import OutboxPublisher, QueuedPayloads, drain_outbox
from engram.projections.beliefs.quarantine import UNDECODABLE_KIND, dead_letter_headers
from engram.projections.beliefs.store import ClaimsRecord
from engram.projections.following import LogFollower
from engram.resolution.chunk import BatchOutcome
from engram.schemas.claims import decode_claims_batch
from engram.schemas.common import PSEUDONYMOUS
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
        self._pool = pool
        self._stopping = asyncio.Event()
        self._publisher: OutboxPublisher | None = None
        self._producer: AIOKafkaProducer | None = None
        """Publishes memory events and the dead letters of batches set aside."""
        self._queued = QueuedPayloads()
        """Memory events this projector committed and has not yet published, with their JSON."""
        self._outbox_outages = 0
        self.sink = BeliefSink(
            pool,
            lanes=lanes,
            max_chunk=max_chunk,
            queued=self._queued,
            dead_letter=self._dead_letter,
            on_outcome=on_outcome,
            on_commit=self._wake_publisher,
        )
        self.follower = LogFollower(
            settings,
            topic=settings.claims_topic,
            decode=self._decode,
            sinks=[self.sink],
            max_records=max_chunk,
        )

    @property
    def projected(self) -> int:
        """Claims batches handled (applied or skipped) by this run."""
        return self.sink.projected

    @property
    def set_aside(self) -> int:
        """Claims batches set aside as unprojectable (:mod:`engram.projections.beliefs.quarantine`)."""
        return self.sink.set_aside

    @property
    def outages(self) -> int:
        """Database operations that found PostgreSQL unreachable (each retried after a pause)."""
        return self.sink.outages + self._outbox_outages

    def stop(self) -> None:
        self._stopping.set()
        self.follower.stop()

    def readiness(self) -> tuple[bool, str]:
        """Ready once its assignment is positioned at the stored offsets, and not while the
        database is unreachable (it is retrying then, and nothing commits)."""
        return self.follower.readiness()

    async def run(self) -> None:
        producer = AIOKafkaProducer(
            bootstrap_servers=self._settings.bootstrap,
            enable_idempotence=True,
            acks="all",
            max_batch_size=MEMORY_EVENT_BATCH_BYTES,
            request_timeout_ms=self._settings.producer_request_timeout_ms,
        )
        await producer.start()
        self._producer = producer
        topic = self._settings.memory_events_topic
        publisher = self._publisher = OutboxPublisher(lambda: self._drain(producer, topic))
        publisher.start()
        try:
            await self.follower.run()
        except BaseException:
            publisher.abandon()
            raise
        finally:
            try:
                await publisher.close()
            finally:
                self._publisher = self._producer = None
                await producer.stop()

    def _wake_publisher(self) -> None:
        if self._publisher is not None:
            self._publisher.wake()

    async def _pause(self, seconds: float) -> None:
        """Back off, but end the pause as soon as the projector is asked to stop."""
        await pause_unless(self._stopping, seconds)

    async def _drain(self, producer: AIOKafkaProducer, topic: str) -> int:
        """Publish pending memory events (how many); while the database or the broker is
        unreachable they wait in the outbox for a later drain."""
        try:
            return await drain_outbox(self._pool, producer, topic, self._queued)
        except UNAVAILABLE as error:
            self._outbox_outages += 1
            report_unavailable("projector.outbox", error, 0)
        except KafkaError as error:
            log.warning("projector.memory_events_unpublished", error=type(error).__name__)
        return 0

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
                batch = decode_claims_batch(value)
                if batch.schema_version == PSEUDONYMOUS:  # a deletion or forgetting, by pseudonym
                    batch = await retry_while_unavailable(
                        partial(self._sealer.identify_claims, batch), what="projector.identify"
                    )
                    value = batch.__pydantic_serializer__.to_json(batch)
                decoded.append(ClaimsRecord(batch, record.offset, value))
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
        producer = self._producer
        assert producer is not None, "dead letters are published while the projector runs"

        async def publish() -> None:
            await producer.send_and_wait(self._settings.dlq_topic, value, headers=headers)

        try:
            await self._until_kafka_has(publish)
        except (MessageSizeTooLargeError, RecordTooLargeError):
            if not value:
                raise
            value, headers = b"", [*headers, ("engram.value_dropped", b"too large")]
            await self._until_kafka_has(publish)
        DEAD_LETTERS.labels(headers[0][1].decode()).inc()

    async def _until_kafka_has(self, publish: Callable[[], Awaitable[None]]) -> None:
        """``publish`` retried while Kafka fails with what may pass, pausing between tries;
        stopping with Kafka away leaves the record unsettled (its chunk is abandoned, not
        failed), to be read and set aside again after a restart."""

        def said(failure: Retrying) -> None:
            log.warning("projector.dead_letter_retry", error=type(failure.error).__name__)

        async def pause(seconds: float) -> None:
            await self._pause(seconds)
            if self._stopping.is_set():
                raise asyncio.CancelledError

        await retry(
            publish,
            backoff=DATABASE_BACKOFF,
            only=lambda error: isinstance(error, KafkaError),
            on_retry=said,
            sleep=pause,
        )
