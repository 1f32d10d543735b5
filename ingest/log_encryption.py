"""``engram log encrypt``: copy a plaintext episodic log into a sealed one.

A log written before encryption was turned on keeps its words in clear for ever; turning
encryption on protects only what comes after. This copies every committed record of the old
topic into a new one, **in the same partition and in the same order**, with its key and
headers: word-carrying events sealed under their principal's key, events that carry none (a
deletion, a forgetting) and events already sealed as they are. Then an operator re-derives a
generation from the new topic and deletes the old one (docs/privacy.md, "Existing logs").

Positions are **mapped, not kept**: a log a transactional producer wrote to (the inbox intake)
has offsets that commit markers and aborted records take, and a partition whose start was
deleted does not begin at 0; the copy is dense. Each copied record names the source offset it
copies in the header :data:`COPIED_FROM`. Order within a partition is kept, and that is what
every reader decides by (canonical order, a session's earlier messages, watermarks): a
generation re-derived from the copy is the one re-derived from the original, row for row, with
each position the copy's. Nothing carries a position of the old topic into it; a position kept
outside Engram (a ``202``'s ``offset``) is found in the copy by that header.

It is **resumable and exactly once** without state of its own: a partition of the copy holds
exactly the source's committed records up to the one its last record names (records are
appended in order by an idempotent producer, and each fetch is acknowledged before the next is
read), so a run stopped anywhere — Ctrl-C, ``kill -9``, a broker failure — goes on after that
record. Whether a copy is **finished** is kept in PostgreSQL (:mod:`engram.ingest.log_copies`): a
worker or a re-derivation refuses to read a copy that is not, so a stopped copy never passes for
a whole log. One copy of a topic runs at a time.

Every source record yields one record; three kinds yield a stand-in rather than a copy, and
are counted:

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
from engram.infra.log_reading import log_consumer
from engram.infra.settings import KafkaSettings
from engram.ingest.producer import encode_episode
from engram.ingest.topics import source_partitions
from engram.keys.store import new_pseudonym
from engram.schemas.common import PSEUDONYMOUS, principal_hash
from engram.schemas.log import decode_log_event
from engram.schemas.sealed import SealedEvent
from engram.sealing.events import LogSealer, Sealable, sealed_as

log = structlog.get_logger(__name__)

MAX_FETCH = 500


@dataclass
class CopyProgress:
    """Where a copy stands: how far through the source's offsets (up to its end offsets at
    the start of the run), and how many records the copy holds."""

    total: int
    """Source offsets to pass: from each partition's start to its end offset (transaction
    markers and aborted records take offsets too, and are not copied)."""
    copied: int = 0
    """Records in the copy (from earlier runs too)."""
    passed: int = 0
    """Source offsets passed, of ``total``."""
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

    def __init__(self, tombstoned: set[str]) -> None:
        self._tombstoned = tombstoned
        self._pseudonyms: dict[tuple[str, str], str] = {}

    def key_id(self, tenant: str, principal: str) -> str | None:
        """The destroyed key a forgotten principal's stand-ins name (None: not forgotten).
        Found by their principal tombstone: the record of a destroyed key names no principal
        (migration 0043), so every forgotten principal's stand-ins name the one stand-in key."""
        return (
            PRE_ENCRYPTION_KEY_ID if principal_hash(tenant, principal) in self._tombstoned else None
        )

    def pseudonym(self, tenant: str, principal: str) -> str:
        """A pseudonym for a forgotten principal's records in the copy: random, the same for
        all of one copy run's records of theirs, and kept nowhere — nothing links it back."""
        return self._pseudonyms.setdefault((tenant, principal), new_pseudonym())


async def forgotten_principals(pool: asyncpg.Pool) -> Forgotten:
    """Principals whose hash is a principal tombstone of the generation ``pool`` reads."""
    rows = await pool.fetch(
        "SELECT principal_hash FROM principal_tombstone "
        "UNION SELECT principal_hash FROM public.principal_forgotten"
    )
    return Forgotten({row["principal_hash"] for row in rows})


async def record_pre_encryption_forgetting(pool: asyncpg.Pool, tenant: str, principal: str) -> None:
    """Name the stand-ins' key as destroyed, so formation reads them as a forgotten person's:
    one row per tenant, naming nobody."""
    await pool.execute(
        "INSERT INTO public.destroyed_data_key (tenant, key_id) "
        "VALUES ($1, $2) ON CONFLICT DO NOTHING",
        tenant,
        PRE_ENCRYPTION_KEY_ID,
    )


def stand_in(event: Sealable, key_id: str, pseudonym: str | None = None) -> SealedEvent:
    """A sealed event under a destroyed key with random words: it keeps the position, names
    the principal and time in clear like every sealed event, and can never be opened."""
    nonce = base64.urlsafe_b64encode(secrets.token_bytes(12)).rstrip(b"=").decode()
    noise = base64.urlsafe_b64encode(secrets.token_bytes(32)).rstrip(b"=").decode()
    return sealed_as(event, f"v1.{key_id}.{nonce}.{noise}", pseudonym)


COPIED_FROM = "engram.copied-from"
"""The header each copied record carries: the offset, in the same partition of the source, of
the record it copies (ASCII digits). The copy's positions are mapped, not assumed equal: a log
a transactional producer wrote to has offsets its commit markers take, and a source whose
start was deleted does not begin at 0; the copy is dense. This header is the mapping, kept on
the copy itself, and where a resumed run starts."""


def copied_from(record: ConsumerRecord[bytes, bytes]) -> int | None:
    """The source offset a record of a copy names (None: not written by a copy)."""
    for name, value in record.headers or ():
        if name == COPIED_FROM:
            text = bytes(value).decode("ascii", "replace")
            return int(text) if text.isdigit() else None
    return None


class LogEncryption:
    """Copies ``source`` into ``target``, partition for partition and in order, up to the
    source's end offsets (its last stable offsets: what committed transactions hold) when the
    run started; each copied record names its source offset (:data:`COPIED_FROM`)."""

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

    def _consumer(self) -> AIOKafkaConsumer:
        return log_consumer(
            bootstrap=self._settings.bootstrap,
            max_partition_fetch_bytes=max(self._settings.max_event_bytes * 2, 1_048_576),
        )

    async def run(self, on_progress: Callable[[CopyProgress], None] | None = None) -> CopyProgress:
        settings = self._settings
        consumer = self._consumer()
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
            copies = await source_partitions(settings.bootstrap, self._target)
            if copies != count:
                raise CopyPartitionsDiffer(self._source, count, self._target, copies)
            sources = [TopicPartition(self._source, p) for p in range(count)]
            consumer.assign(sources)
            ends = await consumer.end_offsets(sources)
            starts = await consumer.beginning_offsets(sources)
            resume = await self._resume_points(count)
            progress = CopyProgress(total=sum(ends[tp] - starts[tp] for tp in sources))
            for tp in sources:
                copied, next_source = resume[tp.partition]
                if next_source is not None and next_source > ends[tp]:
                    raise CopyAhead(self._source, tp.partition, next_source, ends[tp], self._target)
                at = max(starts[tp], next_source or 0)
                consumer.seek(tp, at)
                progress.copied += copied
                progress.passed += at - starts[tp]
            passed = {tp: await consumer.position(tp) for tp in sources}
            while [tp for tp in sources if passed[tp] < ends[tp]]:
                fetched = await consumer.getmany(timeout_ms=500, max_records=self._fetch_records)
                for tp, batch in fetched.items():
                    records = [r for r in batch if r.offset < ends[tp]]
                    if records:
                        await self._copy(records, producer, progress)
                for tp in sources:  # past records and transaction markers alike
                    now = min(await consumer.position(tp), ends[tp])
                    progress.passed += now - passed[tp]
                    passed[tp] = now
                if fetched and on_progress is not None:
                    on_progress(progress)
            return progress
        finally:
            await consumer.stop()
            await producer.stop()

    async def _resume_points(self, count: int) -> dict[int, tuple[int, int | None]]:
        """For each partition of the copy: how many records it holds, and the source offset
        after the last one it copied (None: it is empty), read from that record's header. A
        partition whose last record names no source offset was written by something else."""
        consumer = self._consumer()
        await consumer.start()
        try:
            targets = [TopicPartition(self._target, p) for p in range(count)]
            consumer.assign(targets)
            ends = await consumer.end_offsets(targets)
            starts = await consumer.beginning_offsets(targets)
            points: dict[int, tuple[int, int | None]] = {}
            for tp in targets:
                if ends[tp] <= starts[tp]:
                    points[tp.partition] = (0, None)
                    continue
                consumer.seek(tp, ends[tp] - 1)
                last: ConsumerRecord[bytes, bytes] | None = None
                while await consumer.position(tp) < ends[tp]:
                    fetched = await consumer.getmany(tp, timeout_ms=500)
                    last = next((r for r in reversed(fetched.get(tp, []))), last)
                source_offset = None if last is None else copied_from(last)
                if source_offset is None:
                    raise NotACopy(self._target, tp.partition, ends[tp] - 1, self._source)
                points[tp.partition] = (ends[tp] - starts[tp], source_offset + 1)
            return points
        finally:
            await consumer.stop()

    async def _copy(
        self,
        records: list[ConsumerRecord[bytes, bytes]],
        producer: AIOKafkaProducer,
        progress: CopyProgress,
    ) -> None:
        """Append one partition's records in order, each naming its source offset, and wait
        until Kafka has them all before the next fetch: the copy is always, record for record,
        a prefix of the source's committed records, and its last record says where it ends."""
        sent = []
        for record in records:
            value = await self._copied_value(record.value or b"", progress)
            headers = [(k, bytes(v)) for k, v in (record.headers or ()) if k != COPIED_FROM]
            headers.append((COPIED_FROM, str(record.offset).encode("ascii")))
            sent.append(
                await producer.send(
                    self._target,
                    value,
                    key=record.key,
                    partition=record.partition,
                    headers=headers,
                )
            )
        for future in sent:
            await future
        progress.copied += len(records)

    async def _copied_value(self, raw: bytes, progress: CopyProgress) -> bytes:
        try:
            event = decode_log_event(raw)
        except ValidationError:
            progress.invalid += 1
            return b""
        if event.schema_version == PSEUDONYMOUS:  # sealed or unworded, naming a pseudonym
            progress.kept += 1
            return raw
        # Before sealing: sealing would give a forgotten principal a fresh key.
        destroyed = self._forgotten.key_id(event.tenant, event.principal)
        if isinstance(event, SealedEvent) or not isinstance(event, Sealable):
            # it names the principal in clear: the copy names them by pseudonym (a forgotten
            # one's, random and kept nowhere; a living one's, the one beside their key)
            progress.kept += 1
            if destroyed is not None:
                pseudonym = self._forgotten.pseudonym(event.tenant, event.principal)
                return encode_episode(
                    event.model_copy(
                        update={"principal": pseudonym, "schema_version": PSEUDONYMOUS}
                    )
                )
            return encode_episode(await self._sealer.pseudonymous(event))
        if destroyed is not None:
            if (
                destroyed == PRE_ENCRYPTION_KEY_ID
                and (event.tenant, event.principal) not in self._recorded
            ):
                await self._on_pre_encryption(event.tenant, event.principal)
                self._recorded.add((event.tenant, event.principal))
            progress.forgotten += 1
            pseudonym = self._forgotten.pseudonym(event.tenant, event.principal)
            return encode_episode(stand_in(event, destroyed, pseudonym))
        sealed = await self._sealer.seal(event)
        payload = encode_episode(sealed)
        progress.sealed += 1
        if len(payload) > self._settings.max_event_bytes:
            progress.over_limit += 1
        return payload


class CopyPartitionsDiffer(EngramFailure, ValueError):
    code = "log_copy_partitions"

    def __init__(self, source: str, count: int, target: str, copies: int) -> None:
        super().__init__(
            f"{source} has {count} partitions and {target} {copies}: a principal's records "
            "must stay in the partition their key picks; copy into a new topic (engram log "
            "encrypt creates it with the source's partitions)"
        )


class NotACopy(EngramFailure, ValueError):
    code = "log_copy_foreign"

    def __init__(self, target: str, partition: int, offset: int, source: str) -> None:
        super().__init__(
            f"{target} partition {partition} offset {offset} names no source offset "
            f"({COPIED_FROM}): something other than `engram log encrypt` wrote to it, so where "
            f"a copy of {source} would go on is unknown; copy into a new, empty topic that "
            "nothing else writes to"
        )


class CopyAhead(EngramFailure, ValueError):
    code = "log_copy_ahead"

    def __init__(self, source: str, partition: int, resume: int, end: int, target: str) -> None:
        super().__init__(
            f"{target} partition {partition} already copies {source} up to offset {resume}, "
            f"past the source's end ({end}): it is a copy of another topic; copy into a new, "
            "empty topic"
        )
