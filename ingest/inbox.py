"""The inbox: the door for producers that write to Kafka themselves.

Engram's own doors (HTTP, ``engram ingest``, the client, MCP) validate, encrypt and append to
``engram.episodes`` in one step. A producer that writes to Kafka directly cannot be trusted to
do either, so it writes plaintext turns to ``engram.inbox`` instead, a topic whose retention is
bounded (``ENGRAM_KAFKA_INBOX_RETENTION_MS``, 7 days by default). This stage moves them into the
log, **exactly once**: each fetch is read, each record is admitted by the same contract and size
limit as every other door (refused ones go to the dead-letter topic with the reason, and without
their bytes — the dead-letter topic is kept forever and must not become a plaintext copy of the
inbox), sealed (encrypted when log encryption is on), and the appended episodes and the inbox
offsets are committed in **one Kafka transaction** (``send_offsets_to_transaction``). A crash
before the commit aborts the transaction, so a ``read_committed`` reader (formation, the
indexer) never sees those appends, and the restarted stage re-reads the same records; a crash
after it re-reads nothing. Formation's identities derive from the event id besides, so even a
``read_uncommitted`` reader forms an aborted-then-retried turn once.

After each committed transaction the records it consumed are deleted from the inbox
(``DeleteRecords``, best effort), and once they are older than the topic's ``segment.ms`` the
segment that holds them is closed with a roll marker (:mod:`engram.ingest.inbox_rolling`), so the broker
deletes its file at its next retention check: the plaintext leaves the broker's disk within
``segment.ms`` + the broker's ``log.retention.check.interval.ms`` + ``file.delete.delay.ms`` of
being moved (docs/privacy.md states the bound). Retention is the bound for what the stage never
reached (it was down).

One stage writes at a time: the producer's transactional id is fixed per consumer group
(``<group>-inbox``), so a second stage started beside the first *fences* it — the older one
stops with :class:`InboxIntakeFenced` instead of both appending.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from enum import StrEnum

import structlog
from aiokafka import AIOKafkaConsumer, AIOKafkaProducer, ConsumerRecord, TopicPartition
from aiokafka.admin import AIOKafkaAdminClient, RecordsToDelete
from aiokafka.errors import KafkaError, ProducerFenced
from pydantic import ValidationError

from engram.infra.backoff import Backoff, pause_unless
from engram.infra.errors import EngramFailure
from engram.infra.log_reading import log_consumer
from engram.infra.retry import Retrying, retry
from engram.infra.settings import KafkaSettings
from engram.ingest.inbox_rolling import ROLL_HEADER, SegmentRoller, is_roll_marker
from engram.ingest.producer import EpisodeTooLarge, EpisodeUnencodable, encoded
from engram.ingest.topics import inbox_config, topic_configs
from engram.schemas.common import episode_key
from engram.schemas.episodes import MemoryRemembered, TurnAppended, decode_episode
from engram.schemas.log import LogEvent

log = structlog.get_logger(__name__)

InboxEpisode = TurnAppended | MemoryRemembered
"""What the inbox takes: what every producer's door takes (never corrections)."""

Sealer = Callable[[InboxEpisode], Awaitable[LogEvent]]
"""Makes an admitted episode ready for the log: encrypts its words under the principal's key
when log encryption is on, returns it as it is when encryption is off."""

MAX_FETCH = 500
"""Inbox records moved in one transaction at most."""


class InboxRefusalReason(StrEnum):
    OVERSIZED = "oversized"
    NOT_UTF8 = "not_utf8"
    NOT_EPISODE = "contract_violation"
    """Not JSON, or JSON that is not a turn or a remembered memory by the contract."""
    UNENCODABLE = "unencodable"


@dataclass(frozen=True)
class InboxRefusal:
    """Why an inbox record is not an episode; never carries the record's words."""

    reason: InboxRefusalReason
    detail: str
    size: int
    sha256: str

    def headers(self, *, topic: str, partition: int, offset: int) -> list[tuple[str, bytes]]:
        """The dead letter's headers: the same names as formation's dead letters, plus the
        digest and length that let an operator match it to what a producer says it sent."""
        return [
            ("engram.reason", self.reason.value.encode()),
            ("engram.detail", self.detail[:1000].encode()),
            ("engram.source.topic", topic.encode()),
            ("engram.source.partition", str(partition).encode()),
            ("engram.source.offset", str(offset).encode()),
            ("engram.source.sha256", self.sha256.encode()),
            ("engram.source.bytes", str(self.size).encode()),
        ]


class InboxIntakeFenced(EngramFailure, RuntimeError):
    """Another intake stage took over the inbox's transactional id."""

    code = "inbox_intake_fenced"

    def __init__(self, transactional_id: str) -> None:
        super().__init__(
            f"another inbox intake started with transactional id {transactional_id!r} and took "
            "over; this one stopped. Run one `engram inbox` (or one `engram worker --inbox`) "
            "per consumer group"
        )


def _refusal(reason: InboxRefusalReason, detail: str, payload: bytes) -> InboxRefusal:
    return InboxRefusal(reason, detail, len(payload), hashlib.sha256(payload).hexdigest())


def _describe(error: ValidationError) -> str:
    """The first problem's place and message; pydantic's message never quotes the input."""
    first = error.errors()[0]
    where = ".".join(str(part) for part in first["loc"]) or "value"
    return f"{where}: {first['msg']} ({error.error_count()} problem(s) in all)"


def admit_inbox_record(raw: bytes | None, *, max_bytes: int) -> InboxEpisode | InboxRefusal:
    """The episode in an inbox record, or the refusal saying why there is none — by the same
    contract and the same size measure as ``POST /v1/turns`` and ``engram ingest``."""
    payload = raw or b""
    if len(payload) > max_bytes:
        detail = f"{len(payload)} bytes > {max_bytes} (ENGRAM_KAFKA_MAX_EVENT_BYTES)"
        return _refusal(InboxRefusalReason.OVERSIZED, detail, payload)
    try:
        payload.decode("utf-8")
    except UnicodeDecodeError as error:
        detail = f"invalid UTF-8 at byte {error.start}"
        return _refusal(InboxRefusalReason.NOT_UTF8, detail, payload)
    try:
        episode = decode_episode(payload)
        encoded([episode], max_bytes)
    except ValidationError as error:
        return _refusal(InboxRefusalReason.NOT_EPISODE, _describe(error), payload)
    except EpisodeTooLarge as error:
        detail = f"the episode is {error.size} bytes on the log, over {error.limit}"
        return _refusal(InboxRefusalReason.OVERSIZED, detail, payload)
    except EpisodeUnencodable as error:
        return _refusal(InboxRefusalReason.UNENCODABLE, error.problem, payload)
    return episode


async def unsealed(episode: InboxEpisode) -> LogEvent:
    """The sealer when log encryption is off: the episode goes to the log as admitted."""
    return episode


def inbox_group(settings: KafkaSettings) -> str:
    return f"{settings.group_id}-inbox"


class InboxIntake:
    """Moves the inbox's records into the episodic log until stopped."""

    def __init__(self, settings: KafkaSettings, seal: Sealer = unsealed) -> None:
        self._settings = settings
        self._seal = seal
        self._group = inbox_group(settings)
        self._transactional_id = self._group
        self._stopping = asyncio.Event()
        self._assigned = False
        self.appended = 0
        """Episodes this run appended to the log (committed)."""
        self.refused = 0
        """Inbox records this run dead-lettered (committed)."""

    def stop(self) -> None:
        self._stopping.set()

    def readiness(self) -> tuple[bool, str]:
        if not self._assigned:
            return False, "inbox partitions not yet assigned"
        return True, "ready"

    async def run(self) -> None:
        """Move records until :meth:`stop`; Kafka outages are waited out with backoff
        (:func:`infra.retry.retry`, the wait ending early on stop), a fence by a newer intake
        ends the run with :class:`InboxIntakeFenced`."""
        try:
            await retry(
                self._run_unless_stopping,
                backoff=Backoff(first_s=0.2, max_s=5.0),
                on_retry=_report_unavailable,
                sleep=self._wait_unless_stopping,
            )
        except ProducerFenced:
            raise InboxIntakeFenced(self._transactional_id) from None

    async def _run_unless_stopping(self) -> None:
        if not self._stopping.is_set():
            await self._run_once()

    async def _wait_unless_stopping(self, seconds: float) -> None:
        await pause_unless(self._stopping, seconds)

    async def _run_once(self) -> None:
        settings = self._settings
        consumer = log_consumer(
            settings.inbox_topic,
            bootstrap=settings.bootstrap,
            group_id=self._group,
            auto_offset_reset="earliest",
            session_timeout_ms=settings.session_timeout_ms,
            heartbeat_interval_ms=max(settings.session_timeout_ms // 3, 500),
            max_partition_fetch_bytes=max(settings.max_event_bytes * 2, 1_048_576),
        )
        producer = AIOKafkaProducer(
            bootstrap_servers=settings.bootstrap,
            transactional_id=self._transactional_id,
            enable_idempotence=True,
            acks="all",
            linger_ms=5,
            max_request_size=max(settings.max_event_bytes * 2, 1_048_576),
            request_timeout_ms=settings.producer_request_timeout_ms,
        )
        admin = AIOKafkaAdminClient(bootstrap_servers=settings.bootstrap)
        markers = AIOKafkaProducer(
            bootstrap_servers=settings.bootstrap, enable_idempotence=True, acks="all"
        )
        await producer.start()
        try:
            await markers.start()
            await consumer.start()
            await admin.start()
            try:
                roller = SegmentRoller(await self._segment_ms())
                await self._move(consumer, producer, admin, _Rolling(markers, roller))
            finally:
                await admin.close()
                await consumer.stop()
                await markers.stop()
        finally:
            await producer.stop()

    async def _segment_ms(self) -> int:
        """The inbox's ``segment.ms``; a topic made before Engram bounded its disk (or by
        hand) is named with the settings it lacks, which the operator applies once."""
        topic = self._settings.inbox_topic
        found = await topic_configs(self._settings, topic)
        wanted = inbox_config(self._settings)
        lacking = {
            name: value
            for name, value in wanted.items()
            if name != "retention.ms" and found.get(name) != value
        }
        if lacking:
            log.warning(
                "inbox.disk_unbounded",
                topic=topic,
                lacking=lacking,
                fix=f"kafka-configs --bootstrap-server {self._settings.bootstrap} --alter "
                f"--entity-type topics --entity-name {topic} --add-config "
                + ",".join(f"{k}={v}" for k, v in sorted(lacking.items())),
            )
        return int(found.get("segment.ms") or wanted["segment.ms"])

    async def _move(
        self,
        consumer: AIOKafkaConsumer,
        producer: AIOKafkaProducer,
        admin: AIOKafkaAdminClient,
        rolling: _Rolling,
    ) -> None:
        while not self._stopping.is_set():
            await rolling.roll_due(self._settings.inbox_topic)
            fetched = await consumer.getmany(timeout_ms=500, max_records=MAX_FETCH)
            self._assigned = bool(consumer.assignment())
            records = [record for batch in fetched.values() for record in batch]
            if not records:
                continue
            try:
                positions = await self._commit_moved(records, consumer, producer)
            except ProducerFenced:
                raise
            except KafkaError:
                # Nothing of the aborted transaction is visible to a read_committed reader;
                # go back to what was committed and read it again.
                await self._rewind(consumer, list(fetched))
                raise
            await self._forget_moved(admin, positions)
            for record in records:
                if not is_roll_marker(record.value, record.headers):
                    rolling.roller.moved(record.partition, record.timestamp)

    async def _commit_moved(
        self,
        records: Sequence[ConsumerRecord[bytes, bytes]],
        consumer: AIOKafkaConsumer,
        producer: AIOKafkaProducer,
    ) -> dict[TopicPartition, int]:
        """Append what the records admit and dead-letter the rest, and commit those appends
        with the inbox offsets past them, in one transaction."""
        settings = self._settings
        positions: dict[TopicPartition, int] = {}
        appended = refused = 0
        async with producer.transaction():
            for record in records:
                tp = TopicPartition(record.topic, record.partition)
                positions[tp] = record.offset + 1
                if is_roll_marker(record.value, record.headers):
                    continue  # the intake's own: it closed a segment, and carries nothing
                admitted = await self._admitted(record)
                if isinstance(admitted, InboxRefusal):
                    headers = admitted.headers(
                        topic=record.topic, partition=record.partition, offset=record.offset
                    )
                    await producer.send(settings.dlq_topic, b"", headers=headers)
                    log.warning(
                        "inbox.refused",
                        reason=admitted.reason.value,
                        detail=admitted.detail,
                        partition=record.partition,
                        offset=record.offset,
                    )
                    refused += 1
                else:
                    key, payload = admitted
                    await producer.send(settings.episodes_topic, payload, key=key)
                    appended += 1
            await producer.send_offsets_to_transaction(positions, self._group)
        self.appended += appended
        self.refused += refused
        log.info("inbox.moved", appended=appended, refused=refused)
        return positions

    async def _admitted(
        self, record: ConsumerRecord[bytes, bytes]
    ) -> tuple[bytes, bytes] | InboxRefusal:
        """The key and bytes the record appends to the log, or why it appends nothing. The
        size limit is applied again after sealing: the worker dead-letters what is over it, and
        ciphertext is larger than the words it hides."""
        max_bytes = self._settings.max_event_bytes
        admitted = admit_inbox_record(record.value, max_bytes=max_bytes)
        if isinstance(admitted, InboxRefusal):
            return admitted
        sealed = await self._seal(admitted)
        try:
            [payload] = encoded([sealed], max_bytes)
        except EpisodeTooLarge as error:
            detail = f"the sealed episode is {error.size} bytes on the log, over {error.limit}"
            return _refusal(InboxRefusalReason.OVERSIZED, detail, record.value or b"")
        return episode_key(sealed.tenant, sealed.project), payload

    async def _rewind(self, consumer: AIOKafkaConsumer, partitions: list[TopicPartition]) -> None:
        for tp in partitions:
            with contextlib.suppress(KafkaError):
                committed = await consumer.committed(tp)
                consumer.seek(tp, committed if committed is not None else 0)

    async def _forget_moved(
        self, admin: AIOKafkaAdminClient, positions: dict[TopicPartition, int]
    ) -> None:
        """Delete the committed records from the inbox, so plaintext does not wait out its
        retention there; a failure leaves them to retention, which bounds them anyway."""
        try:
            await admin.delete_records(
                {tp: RecordsToDelete(before_offset=offset) for tp, offset in positions.items()}
            )
        except KafkaError as error:
            log.warning("inbox.delete_records_failed", error=str(error))


def _report_unavailable(failure: Retrying) -> None:
    log.warning("inbox.kafka_unavailable", error=str(failure.error), retry_in_s=failure.wait_s)


class _Rolling:
    """Appends the roll markers :class:`SegmentRoller` says are due, with a producer of its own
    (the intake's is transactional; a marker belongs to no transaction)."""

    def __init__(self, producer: AIOKafkaProducer, roller: SegmentRoller) -> None:
        self.producer = producer
        self.roller = roller

    async def roll_due(self, topic: str) -> None:
        for partition in self.roller.due(int(time.time() * 1000)):
            now_ms = int(time.time() * 1000)
            sent = await self.producer.send_and_wait(
                topic,
                b"",
                partition=partition,
                timestamp_ms=now_ms,
                headers=[(ROLL_HEADER, b"1")],
            )
            # The broker's append time on a LogAppendTime topic; the marker's own otherwise.
            at = sent.timestamp if sent.timestamp is not None and sent.timestamp >= 0 else now_ms
            closed = self.roller.appended(partition, at)
            log.info("inbox.segment_rolled", partition=partition, closed=closed)
