"""The formation pipeline between faust and the core: read in order, form concurrently per
project, publish, acknowledge in order.

For each record: validate (or dead-letter), queue it for the backlog, hand it to its project's
lane; there, once its backlog row is committed, form it with retries (or park it) and queue its
claims batch on the producer; mark it finished when Kafka acknowledges the batch — the
committed offset advances over a prefix of finished records only.

Nothing on this path waits for a round trip of its own: backlog rows are written a chunk per
statement (:mod:`engram.streams.pending`), and a batch's acknowledgement finishes its episode from a
callback while the lane goes on to the next episode.

No publish error strands an episode (:mod:`engram.streams.publishing` classifies them): a retriable
one is retried (:func:`infra.retry.retry`) until Kafka takes the batch; a batch Kafka will never take (larger
than ``ENGRAM_KAFKA_PRODUCER_MAX_REQUEST_BYTES``, say) is not split — one episode's batch is the
projector's unit of idempotence and order — but dead-lettered with its reason, its episode
parked (so the watermark moves past it, counted and visible), and the episode finished so that
the partition's acknowledgements go on.
"""

from __future__ import annotations

import asyncio
import hashlib
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from functools import cache, partial
from typing import Any

import asyncpg
import prometheus_client
import structlog

from engram.infra import metrics
from engram.infra.backoff import Backoff
from engram.infra.db import retry_while_unavailable
from engram.infra.errors import EngramFailure
from engram.infra.retry import retry
from engram.keys.errors import KeyDestroyed
from engram.schemas.claims import ClaimsBatchFormed, RefusalReason, SourcePosition
from engram.schemas.common import principal_hash
from engram.schemas.log import LogEvent, OpenEvent
from engram.schemas.sealed import SealedEvent
from engram.sealing.events import NoKeys, Sealer, is_sealed_event, words_on_log
from engram.streams.acks import ContiguousAcks, InOrderRelease
from engram.streams.dead_letters import DeadLetter, DeadLetterReason, admit_record
from engram.streams.formation_stage import FormationStage
from engram.streams.lanes import KeyLanes
from engram.streams.pending import PendingRecorder
from engram.streams.publishing import (
    RecordRejected,
    acknowledged,
    count_retry,
    send_until_queued,
)
from engram.streams.retrying import Parked, RetryPolicy, attempt_until_parked
from engram.watermarks import backlog

log = structlog.get_logger(__name__)

Send = Callable[..., Awaitable[Any]]
Serves = Callable[[LogEvent], bool]


def serves_everyone(episode: LogEvent) -> bool:
    return True


@dataclass(frozen=True)
class Record:
    topic: str
    partition: int
    offset: int
    timestamp_ms: int | None
    value: bytes | None


@dataclass(frozen=True)
class Work:
    record: Record
    episode: LogEvent
    entry: backlog.BacklogEntry
    acknowledged: bool
    recorded: asyncio.Future[int]
    """Resolves to the episode's failed attempts once its backlog row is committed."""


class FormationPipeline:
    def __init__(
        self,
        stage: FormationStage,
        pool: asyncpg.Pool,
        *,
        send_claims: Send,
        send_dead_letter: Send,
        ack: Callable[[Any], object],
        retry: RetryPolicy,
        max_bytes: int,
        max_in_flight: int,
        publish_backoff: Backoff,
        serves: Serves = serves_everyone,
        sealer: Sealer | None = None,
    ):
        """``serves`` says which episodes this process forms (a generation built for some
        principals); the others are recorded as formed without a batch, so watermarks move."""
        self._stage = stage
        self._serves = serves
        self._sealer: Sealer = sealer or NoKeys()
        self._pool = pool
        self._send_claims = send_claims
        self._send_dead_letter = send_dead_letter
        self._retry = retry
        self._max_bytes = max_bytes
        self.acks: ContiguousAcks[Any] = ContiguousAcks(ack)
        self.lanes: KeyLanes[Work] = KeyLanes(self._form, max_in_flight=max_in_flight)
        self._in_order: InOrderRelease[Formed] = InOrderRelease(self._release)
        self._read_at: dict[tuple[int, int], float] = {}
        self._publishing: dict[tuple[int, int], float] = {}
        """Records handed to Kafka and not yet acknowledged, by position: since when."""
        self._backoff = publish_backoff
        self._resends: set[asyncio.Task[None]] = set()
        self.pending = PendingRecorder(self._record_pending)
        # Read when /metrics is scraped, not set twice a record (a lock and a call each).
        metrics.IN_FLIGHT.set_function(lambda: self.acks.in_flight)

    @property
    def pool(self) -> asyncpg.Pool:
        return self._pool

    async def accept(self, record: Record, event: Any) -> None:
        """Take one record in log order; returns once it is queued (or dead-lettered)."""
        self.acks.track(record.partition, record.offset, event)
        self._read_at[(record.partition, record.offset)] = time.monotonic()
        admitted = admit_record(record.value, max_bytes=self._max_bytes)
        if isinstance(admitted, DeadLetter):
            await self._dead_letter(record, admitted)
            self._finish(record)
            return
        admitted = await self._identified(admitted)
        self._in_order.reserve(_principal_key(record, admitted), record.offset)
        await self.lanes.submit(_lane_key(admitted), self._work(record, admitted, True))

    async def reform(self, record: Record) -> None:
        """Form an unparked episode again, outside the consumer's acknowledgement order."""
        admitted = admit_record(record.value, max_bytes=self._max_bytes)
        if isinstance(admitted, DeadLetter):
            log.error(
                "formation.requeued_unreadable",
                partition=record.partition,
                offset=record.offset,
                reason=admitted.reason.value,
            )
            return
        admitted = await self._identified(admitted)
        await self.lanes.submit(_lane_key(admitted), self._work(record, admitted, False))

    async def _identified(self, event: LogEvent) -> LogEvent:
        """The event naming its principal, not their pseudonym, while their key lives: one
        principal's episodes are ordered, hashed in the backlog and formed as theirs whichever
        way the log names them (a cache hit, except the first time a process meets someone)."""
        return await retry_while_unavailable(
            lambda: self._sealer.identify(event), what="formation.identify"
        )

    def oldest_in_flight_s(self) -> float:
        if not self._read_at:
            return 0.0
        return time.monotonic() - min(self._read_at.values())

    def oldest_unacknowledged_publish_s(self) -> float:
        """How long the oldest record handed to Kafka has waited for its acknowledgement (a
        broker that is down or unreachable shows here within seconds)."""
        if not self._publishing:
            return 0.0
        return time.monotonic() - min(self._publishing.values())

    async def close(self) -> None:
        """Cancel the lanes and any publish waiting to be retried (shutdown)."""
        await self.lanes.close()
        for task in list(self._resends):
            task.cancel()
        await asyncio.gather(*self._resends, return_exceptions=True)

    def _work(self, record: Record, episode: LogEvent, acknowledged: bool) -> Work:
        appended = datetime.fromtimestamp((record.timestamp_ms or 0) / 1000, tz=UTC)
        entry = backlog.BacklogEntry(
            record.topic,
            record.partition,
            record.offset,
            episode.tenant,
            episode.project,
            episode.event_id,
            episode.occurred_at,
            appended,
            principal_hash(episode.tenant, episode.principal),
            episode.session,
            words_on_log(episode),
        )
        return Work(record, episode, entry, acknowledged, self.pending.record(entry))

    async def _record_pending(
        self, entries: Sequence[backlog.BacklogEntry]
    ) -> dict[backlog.Position, int]:
        return await retry_while_unavailable(
            lambda: backlog.record_pending_many(self._pool, entries), what="backlog.record_pending"
        )

    async def _form(self, work: Work) -> None:
        failed_before = await work.recorded  # pending in the backlog before any batch exists
        if not self._serves(work.episode):
            await retry_while_unavailable(
                lambda: backlog.record_skipped(self._pool, work.entry), what="backlog.skip"
            )
            await self._done(work, None)
            return
        source = SourcePosition(
            topic=work.record.topic, partition=work.record.partition, offset=work.record.offset
        )
        opened: OpenEvent | EngramFailure
        try:
            opened = await retry_while_unavailable(
                lambda: self._sealer.open(work.episode), what="formation.open"
            )
        except KeyDestroyed:
            # The principal was forgotten and their key destroyed: their words are unreadable
            # for good, which is the point. Formed, with nothing to form — not an error.
            log.info("formation.words_destroyed", episode=str(work.episode.event_id))
            await retry_while_unavailable(
                lambda: backlog.record_skipped(self._pool, work.entry), what="backlog.skip"
            )
            await self._done(work, None)
            return
        except EngramFailure as failure:
            opened = failure
        outcome = await attempt_until_parked(
            lambda: self._form_opened(opened, source),
            policy=self._retry,
            failed_before=failed_before,
            record_failure=lambda kind, park: self._failed(work, kind, park),
            waits=self._stage.waits,
        )
        batch = None
        if isinstance(outcome, Parked):
            metrics.EPISODES_PARKED.inc()
            log.warning(
                "formation.parked",
                episode=str(work.episode.event_id),
                partition=work.record.partition,
                offset=work.record.offset,
                attempts=outcome.attempts,
                failure=outcome.failure_kind,
            )
        else:
            metrics.ATTEMPTS.labels("succeeded").inc()
            batch = outcome.value
        await self._done(work, batch)

    async def _form_opened(
        self, opened: OpenEvent | EngramFailure, source: SourcePosition
    ) -> ClaimsBatchFormed:
        """Form what opened; an event that could not be opened (no KEK here, altered words)
        fails each attempt with the reason, and parks like any failing episode."""
        if isinstance(opened, EngramFailure):
            raise opened
        return await self._stage.form(opened, source)

    async def _done(self, work: Work, batch: ClaimsBatchFormed | None) -> None:
        """Release in the principal's log order (or at once, for a requeued episode)."""
        if work.acknowledged:
            key = _principal_key(work.record, work.episode)
            await self._in_order.complete(key, work.record.offset, Formed(work, batch))
        else:
            await self._release(Formed(work, batch))

    async def _release(self, formed: Formed) -> None:
        """Queue the batch on the producer (unless parked); the episode finishes once Kafka
        has acknowledged it. Called in log order per principal, and the producer keeps the
        order it was handed batches in, so one principal's batches leave in log order."""
        batch = formed.batch
        if batch is None:
            self._finished(formed.work)
            return
        sealed_source = isinstance(formed.work.episode, SealedEvent)
        key, payload = await retry_while_unavailable(
            lambda: self._sealer.seal_claims_record(batch, source_sealed=sealed_source),
            what="formation.seal_claims",
        )
        formed = Formed(formed.work, batch, payload, key)
        self._publishing.setdefault(_position(formed.work.record), time.monotonic())
        await self._queue(formed)

    async def _queue(self, formed: Formed) -> None:
        """Hand the batch to the producer, retrying what Kafka may take later; Kafka's answer
        finishes the episode (:meth:`_published`). A batch Kafka will never take is rejected."""
        try:
            sent = await self._send_batch(formed)
        except RecordRejected as rejected:
            await self._reject(formed.work, rejected)
            return
        sent.add_done_callback(partial(self._published, formed))

    async def _send_batch(self, formed: Formed) -> asyncio.Future[Any]:
        batch = formed.batch
        assert batch is not None and formed.payload is not None and formed.key is not None
        return await send_until_queued(
            self._send_claims,
            stream="claims",
            backoff=self._backoff,
            key=formed.key,
            value=formed.payload,
        )

    def _published(self, formed: Formed, sent: asyncio.Future[Any]) -> None:
        """Kafka answered for one claims batch: count it and finish its episode, or, when the
        delivery failed, send the batch again (:meth:`_redeliver`)."""
        if sent.cancelled():
            return  # shutdown: the episode was not acknowledged, a restart reads it again
        if sent.exception() is None:
            _count_published(formed.batch)
            self._finished(formed.work)
            return
        self._spawn(self._redeliver(formed, sent))

    async def _redeliver(self, formed: Formed, failed: asyncio.Future[Any]) -> None:
        """Send a batch whose delivery failed until Kafka has it (:func:`infra.retry.retry`;
        its first attempt is the delivery that failed), then finish its episode. A batch Kafka
        refuses for good is dead-lettered.

        The producer keeps a partition's batches in order while it retries them itself (one
        request in flight per broker), for up to ``ENGRAM_KAFKA_PRODUCER_REQUEST_TIMEOUT_MS``.
        A batch that fails only after that has later batches behind it that may already be
        written: its resend can then land after them (a duplicate is skipped by the projector;
        an inversion is the limit docs/reliability.md states). Readiness reports the wait long
        before, after ``ENGRAM_WORKER_PUBLISH_STALL_AFTER_S``."""
        earlier = [failed]

        async def deliver() -> None:
            sent = earlier.pop() if earlier else await self._send_batch(formed)
            await acknowledged(sent)

        try:
            await retry(deliver, backoff=self._backoff, on_retry=partial(count_retry, "claims"))
        except RecordRejected as rejected:
            await self._reject(formed.work, rejected)
            return
        _count_published(formed.batch)
        self._finished(formed.work)

    def _spawn(self, work: Awaitable[None]) -> None:
        task = asyncio.ensure_future(work)
        self._resends.add(task)
        task.add_done_callback(self._resends.discard)

    async def _reject(self, work: Work, rejected: RecordRejected) -> None:
        """Kafka will never take this episode's claims batch: dead-letter the episode with the
        reason, park it (the watermark moves past it, and ``engram parked`` shows it) and
        finish it, so later episodes are acknowledged."""
        reason = (
            DeadLetterReason.CLAIMS_TOO_LARGE
            if rejected.too_large
            else DeadLetterReason.CLAIMS_REJECTED
        )
        letter = DeadLetter(reason, str(rejected)[:1000])
        await self._dead_letter(work.record, letter)
        await retry_while_unavailable(
            lambda: backlog.record_failure(self._pool, work.entry, kind=reason.value, park=True),
            what="backlog.record_failure",
        )
        metrics.EPISODES_PARKED.inc()
        self._finished(work)

    def _finished(self, work: Work) -> None:
        self._publishing.pop(_position(work.record), None)
        if work.acknowledged:
            self._finish(work.record)

    async def _failed(self, work: Work, kind: str, park: bool) -> int:
        metrics.ATTEMPTS.labels("failed").inc()
        log.warning(
            "formation.attempt_failed",
            episode=str(work.episode.event_id),
            failure=kind,
            parking=park,
        )
        # Retried while the database is unreachable: a failure whose commit was lost with the
        # connection can be counted twice, parking that episode one attempt early.
        return await retry_while_unavailable(
            lambda: backlog.record_failure(self._pool, work.entry, kind=kind, park=park),
            what="backlog.record_failure",
        )

    async def _dead_letter(self, record: Record, letter: DeadLetter) -> None:
        log.warning(
            "formation.dead_letter",
            reason=letter.reason.value,
            partition=record.partition,
            offset=record.offset,
            detail=letter.detail,
        )
        position = _position(record)
        self._publishing.setdefault(position, time.monotonic())
        headers = letter.headers(
            topic=record.topic, partition=record.partition, offset=record.offset
        )
        key = f"{record.topic}/{record.partition}/{record.offset}".encode()
        value = record.value or b""
        if self._sealer.seal_new and not is_sealed_event(value):
            # The dead-letter topic is kept forever: with log encryption on it keeps no
            # plaintext — a record nobody sealed is named by its digest and length only.
            headers += [
                ("engram.source.sha256", hashlib.sha256(value).hexdigest().encode()),
                ("engram.source.bytes", str(len(value)).encode()),
            ]
            value = b""
        await self._publish_dead_letter(key, value, headers)
        self._publishing.pop(position, None)
        metrics.DEAD_LETTERS.labels(letter.reason.value).inc()

    async def _publish_dead_letter(
        self, key: bytes, value: bytes, headers: list[tuple[str, bytes]]
    ) -> None:
        """Publish until Kafka acknowledges (dead letters have no order to keep). A value Kafka
        will not take goes without it: the headers name its source position in the log."""
        try:
            await self._deliver_dead_letter(key, value, headers)
        except RecordRejected:
            if not value:
                raise
            dropped = [*headers, ("engram.value_dropped", b"too large")]
            await self._deliver_dead_letter(key, b"", dropped)

    async def _deliver_dead_letter(
        self, key: bytes, value: bytes, headers: list[tuple[str, bytes]]
    ) -> None:
        async def deliver() -> None:
            sent = await send_until_queued(
                self._send_dead_letter,
                stream="dead_letters",
                backoff=self._backoff,
                key=key,
                value=value,
                headers=headers,
            )
            await acknowledged(sent)

        await retry(deliver, backoff=self._backoff, on_retry=partial(count_retry, "dead_letters"))

    def _finish(self, record: Record) -> None:
        self._read_at.pop((record.partition, record.offset), None)
        self.acks.finish(record.partition, record.offset)


@dataclass(frozen=True)
class Formed:
    work: Work
    batch: ClaimsBatchFormed | None
    payload: bytes | None = None
    """The batch's bytes on the claims topic (sealed when log encryption is on), once released."""
    key: bytes | None = None
    """Its record key: ``tenant/<pseudonym>`` when the batch is sealed or pseudonymous."""


def _count_published(batch: ClaimsBatchFormed | None) -> None:
    """Count one published batch. Runs in every batch's acknowledgement: refusals are counted
    per reason in a plain dict, and each reason's labelled child is looked up once."""
    if batch is None:
        return
    metrics.EPISODES_FORMED.inc()
    metrics.CANDIDATES_ADMITTED.inc(batch.counts.admitted)
    refused: dict[RefusalReason, int] = {}
    for refusal in batch.refusals:
        refused[refusal.reason] = refused.get(refusal.reason, 0) + 1
    for reason, count in refused.items():
        _refused(reason).inc(count)


@cache
def _refused(reason: RefusalReason) -> prometheus_client.Counter:
    return metrics.PROPOSALS_REFUSED.labels(reason.value)


def _position(record: Record) -> tuple[int, int]:
    return record.partition, record.offset


def _principal_key(record: Record, episode: LogEvent) -> tuple[int, str]:
    return record.partition, f"{episode.tenant}/{episode.principal}"


def _lane_key(episode: LogEvent) -> str:
    return f"{episode.tenant}/{episode.project}"
