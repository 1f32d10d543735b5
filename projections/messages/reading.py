"""Reading the episodic log for the messages wing: each record opened and decoded once, for
every sink of its follower (the index, the vectors).

A sealed event's words are opened here, once a record whatever number of sinks then take it
(:func:`follow_messages`); a forgotten principal's (key destroyed) or an altered one's become
an empty entry, which yields no message. No KEK in this process raises: skipping would leave
holes for good.
"""

from __future__ import annotations

from collections.abc import Sequence

import structlog
from aiokafka import ConsumerRecord, TopicPartition
from pydantic import ValidationError

from engram.infra.db import retry_while_unavailable
from engram.infra.settings import KafkaSettings
from engram.keys.errors import CiphertextRejected, KeyDestroyed
from engram.projections.following import LogFollower, Sink
from engram.projections.messages.store import LogEntry, LogRecord, entry_of
from engram.schemas.common import PSEUDONYMOUS
from engram.schemas.corrections import BeliefDeleted, PrincipalForgotten
from engram.schemas.log import decode_log_event
from engram.schemas.sealed import SealedEvent
from engram.sealing.events import NoKeys, Sealer

log = structlog.get_logger(__name__)

_SEALED = b'"sealed"'
"""Every sealed event has this bytes sequence (its type); most plaintext records do not, so
only those that have it are decoded twice (the envelope, then the words)."""

_PSEUDONYMOUS = b'"schema_version":2'
"""What a deletion or forgetting naming its principal by pseudonym holds (compact JSON, as
Engram's doors write it); only those records are decoded here."""

MAX_FETCH = 500
"""Records of one partition written in one transaction at most."""


async def opened(sealer: Sealer, record: LogRecord) -> LogRecord:
    """The record with a sealed event's words opened; a forgotten principal's (key
    destroyed) or an altered one's become an empty record, which yields no message."""
    if _SEALED not in record.value and _PSEUDONYMOUS not in record.value:
        return record
    try:
        event = decode_log_event(record.value)
    except ValidationError:
        return record  # not a log event at all: entry_of leaves it empty
    if isinstance(event, BeliefDeleted | PrincipalForgotten):
        return await _named(sealer, record, event)
    if not isinstance(event, SealedEvent):
        return record
    try:
        words = await retry_while_unavailable(lambda: sealer.open_words(event), what="log.open")
    except (KeyDestroyed, CiphertextRejected) as failure:
        log.info("log.unreadable", offset=record.offset, code=failure.code)
        return LogRecord(record.partition, record.offset, b"")
    # entry_of decodes (and validates) it, as it does every plaintext record
    return LogRecord(record.partition, record.offset, words)


async def _named(
    sealer: Sealer, record: LogRecord, event: BeliefDeleted | PrincipalForgotten
) -> LogRecord:
    """A deletion or forgetting naming its principal again (it names a pseudonym on the log);
    one whose pseudonym's key is gone names nobody any more: an empty record (the projector
    erased the rows it would have)."""
    if event.schema_version != PSEUDONYMOUS:
        return record
    named = await retry_while_unavailable(lambda: sealer.identify(event), what="log.identify")
    if not isinstance(named, BeliefDeleted | PrincipalForgotten) or (
        named.schema_version == PSEUDONYMOUS
    ):
        return LogRecord(record.partition, record.offset, b"")
    return LogRecord(record.partition, record.offset, named.__pydantic_serializer__.to_json(named))


class LogReader:
    """The follower's decoder for ``engram.episodes``: each record opened and decoded once."""

    def __init__(self, sealer: Sealer | None = None) -> None:
        self._sealer: Sealer = sealer or NoKeys()

    async def __call__(self, tp: TopicPartition, records: list[ConsumerRecord]) -> list[LogEntry]:
        return [
            entry_of(await opened(self._sealer, LogRecord(tp.partition, r.offset, r.value or b"")))
            for r in records
        ]


def follow_messages(
    settings: KafkaSettings,
    sinks: Sequence[Sink[LogEntry]],
    sealer: Sealer | None = None,
    *,
    max_records: int = MAX_FETCH,
) -> LogFollower[LogEntry]:
    """One follower of the episodic log for ``sinks`` (the index, the vectors, or both): one
    fetch and one opening per record for all of them; its consumer group is
    ``<group>-messages``, ``<group>-embeddings`` or ``<group>-messages+embeddings``."""
    return LogFollower(
        settings,
        topic=settings.episodes_topic,
        decode=LogReader(sealer),
        sinks=sinks,
        max_records=max_records,
    )
