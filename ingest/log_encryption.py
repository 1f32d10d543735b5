"""``engram log encrypt``: copy a plaintext episodic log into a sealed one.

A log written before encryption was turned on keeps its words in clear for ever; turning
encryption on protects only what comes after. This copies every record of the old topic into
a new one **at the same partition and offset**, with its key: word-carrying events sealed under
their principal's key, events that carry none (a deletion, a forgetting) and events already
sealed as they are. Then an operator re-derives a generation from the new topic and deletes
the old one (docs/privacy.md, "Existing logs"). Because every record keeps its position, the
generation re-derived from the copy is the one re-derived from the original, digest for digest
(positions are part of every belief's evidence).

It is **resumable and exactly once** without any state of its own: a partition of the copy
holds exactly the source's records below its end offset (records are appended in order by an
idempotent producer, and each fetch is acknowledged before the next is read), so a run that
was stopped anywhere — Ctrl-C, ``kill -9``, a broker failure — continues at the copy's end
offset. One copy of a topic runs at a time.

Every source record yields one record, so positions hold; three kinds yield a stand-in rather
than a copy, and are counted:

- a record that is not a valid log event (formation dead-lettered it; copying its bytes would
  copy plaintext nobody can attribute to a key) becomes an empty record, which formation
  dead-letters again — without words;
- the words of a principal who was forgotten (whose data key was destroyed, or whose hash is
  a principal tombstone: forgotten before encryption) become a sealed event under their
  destroyed key with random bytes for words, which formation records as formed with nothing
  to form — sealing their words under a fresh key would make a forgotten person readable again.
  A principal forgotten before encryption gets a ``destroyed_data_key`` entry named
  ``forgotten-before-encryption`` for this;
- nothing else is left out. A sealed event over ``ENGRAM_KAFKA_MAX_EVENT_BYTES`` is still
  copied (and counted): formation would dead-letter it, so raise the limit before re-deriving.
"""

from __future__ import annotations

import base64
import secrets
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

import asyncpg
import structlog
from aiokafka import AIOKafkaConsumer, AIOKafkaProducer, ConsumerRecord, TopicPartition
from pydantic import ValidationError

from engram.infra.errors import EngramFailure
from engram.infra.settings import KafkaSettings
from engram.ingest.producer import encode_episode
from engram.ingest.topics import source_partitions
from engram.schemas.common import principal_hash
from engram.schemas.log import decode_log_event
from engram.schemas.sealed import SealedEvent
from engram.sealing.events import LogSealer, Sealable, sealed_as

log = structlog.get_logger(__name__)

MAX_FETCH = 500


@dataclass
class CopyProgress:
    """Where a copy stands: records of the source copied, of its end offsets at the start."""

    total: int
    copied: int = 0
    sealed: int = 0
    kept: int = 0
    """Copied as they were: already sealed, or carrying no words."""
    invalid: int = 0
    forgotten: int = 0
    over_limit: int = 0


PRE_ENCRYPTION_KEY_ID = "forgotten-before-encryption"
"""The destroyed key a principal forgotten before encryption is recorded under."""


class Forgotten:
    """Who must not be sealed again, and the destroyed key id their stand-ins name."""

    def __init__(self, destroyed: dict[tuple[str, str], str], tombstoned: set[str]) -> None:
        self._destroyed = destroyed
        self._tombstoned = tombstoned

    def key_id(self, tenant: str, principal: str) -> str | None:
        """The destroyed key of a forgotten principal (None: not forgotten)."""
        digest = principal_hash(tenant, principal)
        found = self._destroyed.get((tenant, digest))
        if found is not None:
            return found
        if digest in self._tombstoned:
            return PRE_ENCRYPTION_KEY_ID
        return None


async def forgotten_principals(pool: asyncpg.Pool) -> Forgotten:
    """Principals whose key was destroyed, and those whose hash is a principal tombstone of the
    generation ``pool`` reads (forgotten before encryption)."""
    destroyed = {
        (row["tenant"], row["principal_hash"]): row["key_id"]
        for row in await pool.fetch(
            "SELECT tenant, principal_hash, key_id FROM public.destroyed_data_key "
            "ORDER BY destroyed_at"
        )
    }
    rows = await pool.fetch("SELECT principal_hash FROM principal_tombstone")
    return Forgotten(destroyed, {row["principal_hash"] for row in rows})


async def record_pre_encryption_forgetting(pool: asyncpg.Pool, tenant: str, principal: str) -> None:
    """Name the stand-ins' key as destroyed, so formation reads them as a forgotten person's."""
    await pool.execute(
        "INSERT INTO public.destroyed_data_key (tenant, principal_hash, key_id) "
        "VALUES ($1, $2, $3) ON CONFLICT DO NOTHING",
        tenant,
        principal_hash(tenant, principal),
        PRE_ENCRYPTION_KEY_ID,
    )


def stand_in(event: Sealable, key_id: str) -> SealedEvent:
    """A sealed event under a destroyed key with random words: it keeps the position, names
    the principal and time in clear like every sealed event, and can never be opened."""
    nonce = base64.urlsafe_b64encode(secrets.token_bytes(12)).rstrip(b"=").decode()
    noise = base64.urlsafe_b64encode(secrets.token_bytes(32)).rstrip(b"=").decode()
    return sealed_as(event, f"v1.{key_id}.{nonce}.{noise}")


class LogEncryption:
    """Copies ``source`` into ``target``, position for position, up to the source's end
    offsets when the run started."""

    def __init__(
        self,
        settings: KafkaSettings,
        *,
        source: str,
        target: str,
        sealer: LogSealer,
        forgotten: Forgotten,
        on_forgotten_before_encryption: Callable[[str, str], Awaitable[None]],
        fetch_records: int = MAX_FETCH,
    ) -> None:
        self._settings = settings
        self._source = source
        self._target = target
        self._sealer = sealer
        self._forgotten = forgotten
        self._on_pre_encryption = on_forgotten_before_encryption
        self._recorded: set[tuple[str, str]] = set()
        self._fetch_records = fetch_records

    async def run(self, on_progress: Callable[[CopyProgress], None] | None = None) -> CopyProgress:
        settings = self._settings
        consumer = AIOKafkaConsumer(
            bootstrap_servers=settings.bootstrap,
            enable_auto_commit=False,
            isolation_level="read_committed",
            max_partition_fetch_bytes=max(settings.max_event_bytes * 2, 1_048_576),
        )
        producer = AIOKafkaProducer(
            bootstrap_servers=settings.bootstrap,
            enable_idempotence=True,
            acks="all",
            linger_ms=5,
            max_request_size=max(settings.max_event_bytes * 4, 4_194_304),
            request_timeout_ms=settings.producer_request_timeout_ms,
        )
        await producer.start()
        await consumer.start()
        try:
            count = await source_partitions(settings.bootstrap, self._source)
            sources = [TopicPartition(self._source, p) for p in range(count)]
            targets = [TopicPartition(self._target, p) for p in range(count)]
            consumer.assign(sources)
            ends = await consumer.end_offsets(sources)
            starts = await consumer.beginning_offsets(sources)
            copied = await consumer.end_offsets(targets)
            progress = CopyProgress(total=sum(ends.values()))
            for source, target in zip(sources, targets, strict=True):
                if starts[source] > 0:
                    raise LogNotWhole(self._source, source.partition, starts[source])
                consumer.seek(source, copied[target])
                progress.copied += copied[target]
            while [tp for tp in sources if await consumer.position(tp) < ends[tp]]:
                fetched = await consumer.getmany(timeout_ms=500, max_records=self._fetch_records)
                for tp, batch in fetched.items():
                    records = [r for r in batch if r.offset < ends[tp]]
                    if records:
                        await self._copy(records, producer, progress)
                if fetched and on_progress is not None:
                    on_progress(progress)
            return progress
        finally:
            await consumer.stop()
            await producer.stop()

    async def _copy(
        self,
        records: list[ConsumerRecord[bytes, bytes]],
        producer: AIOKafkaProducer,
        progress: CopyProgress,
    ) -> None:
        """Append one partition's records in order and wait until Kafka has them all, so the
        copy's end offset is always a prefix of the source."""
        sent = []
        for record in records:
            value = await self._copied_value(record.value or b"", progress)
            sent.append(
                await producer.send(self._target, value, key=record.key, partition=record.partition)
            )
        for future, record in zip(sent, records, strict=True):
            metadata = await future
            if metadata.offset != record.offset:
                raise PositionsDiverged(
                    self._source, record.partition, record.offset, metadata.offset
                )
        progress.copied += len(records)

    async def _copied_value(self, raw: bytes, progress: CopyProgress) -> bytes:
        try:
            event = decode_log_event(raw)
        except ValidationError:
            progress.invalid += 1
            return b""
        if isinstance(event, SealedEvent) or not isinstance(event, Sealable):
            progress.kept += 1
            return raw
        # Before sealing: sealing would give a forgotten principal a fresh key.
        destroyed = self._forgotten.key_id(event.tenant, event.principal)
        if destroyed is not None:
            if (
                destroyed == PRE_ENCRYPTION_KEY_ID
                and (event.tenant, event.principal) not in self._recorded
            ):
                await self._on_pre_encryption(event.tenant, event.principal)
                self._recorded.add((event.tenant, event.principal))
            progress.forgotten += 1
            return encode_episode(stand_in(event, destroyed))
        sealed = await self._sealer.seal(event)
        payload = encode_episode(sealed)
        progress.sealed += 1
        if len(payload) > self._settings.max_event_bytes:
            progress.over_limit += 1
        return payload


class LogNotWhole(EngramFailure, ValueError):
    code = "log_not_whole"

    def __init__(self, topic: str, partition: int, start: int) -> None:
        super().__init__(
            f"{topic} partition {partition} starts at offset {start}, not 0: records were "
            "deleted from it, so the copy could not keep their positions; copy it with a "
            "plain topic copy and re-derive instead"
        )


class PositionsDiverged(EngramFailure, RuntimeError):
    code = "log_copy_diverged"

    def __init__(self, topic: str, partition: int, source: int, copied: int) -> None:
        super().__init__(
            f"the copy of {topic} partition {partition} offset {source} landed at {copied}: "
            "another writer appended to the target, or the source has gaps (transaction "
            "markers); copy into a new, empty topic that nothing else writes to"
        )
