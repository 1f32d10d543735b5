"""Claims batches the projector cannot apply because of what they hold, set aside instead of
stopping the stream.

A producer can write straight to Kafka, past every door's text contract, and a bug in a core
can build a batch PostgreSQL refuses. Such a batch fails the same way however often it is tried,
so retrying it (or crashing, and being restarted onto the same record) stops every principal
whose batches share its partition — and since the log is permanent, every re-derivation too.
The projector therefore tells a refusal by PostgreSQL of the *data* (SQLSTATE classes 22, 23
and 54: a NUL in text, a value out of range, a row over an index's limit), an encoding failure
of the client, or an exception of the pure resolution core, from an outage (which pauses and
retries: :data:`infra.db.UNAVAILABLE`), and applies a refused chunk again one record at
a time: the records that apply alone commit as usual, and a record that is refused alone is
*quarantined* — its episode parked in the formation backlog with the kind
:data:`UNPROJECTABLE_KIND` (so the formed watermark moves past it, counted as parked and listed
by ``engram formation parked``), and the stored offset advanced past it, in one transaction, so
exactly-once holds; and its bytes dead-lettered with the reason and both positions (``engram dlq
list``). Replay meets the same record and sets it aside the same way.
"""

from __future__ import annotations

from dataclasses import dataclass

import asyncpg

from engram.infra.db import transaction
from engram.projections.beliefs.store import BELIEFS_TRACKING, advance_offset
from engram.schemas.claims import SourcePosition
from engram.watermarks import backlog

UNPROJECTABLE: tuple[type[BaseException], ...] = (
    asyncpg.exceptions.DataError,  # class 22: NUL in text, out of range, bad encoding
    asyncpg.exceptions.IntegrityConstraintViolationError,  # class 23: a check the data breaks
    asyncpg.exceptions.ProgramLimitExceededError,  # class 54: an index row or tsvector too big
    UnicodeError,  # text the client cannot encode (a lone surrogate)
    ArithmeticError,
    AttributeError,
    KeyError,
    IndexError,
    TypeError,
    ValueError,  # the pure resolution core: a bug shows on one batch, not on the stream
)
"""Failures that follow a batch's content, not the database's availability."""

UNPROJECTABLE_KIND = "unprojectable"
"""The failure kind a quarantined batch's episode is parked with, and its dead letter's reason."""
UNDECODABLE_KIND = "claims_undecodable"
"""The dead letter's reason for a record of ``engram.claims`` that is no claims batch."""


def dead_letter_headers(
    reason: str, detail: str, *, topic: str, partition: int, offset: int
) -> list[tuple[str, bytes]]:
    """A dead letter's headers, as the formation stage writes them (``engram dlq list`` reads
    them): the reason first, then the detail and where the record is in the log."""
    return [
        ("engram.reason", reason.encode()),
        ("engram.detail", detail[:1000].encode()),
        ("engram.source.topic", topic.encode()),
        ("engram.source.partition", str(partition).encode()),
        ("engram.source.offset", str(offset).encode()),
    ]


def describe(error: BaseException) -> str:
    """What refused the batch, without its words: the SQLSTATE and PostgreSQL's message (which
    names the offending byte, never the row), or the exception's type."""
    if isinstance(error, asyncpg.PostgresError):
        return f"{type(error).__name__} (SQLSTATE {error.sqlstate}): {error.args[0]}"[:500]
    return type(error).__name__


@dataclass(frozen=True)
class Quarantined:
    """A claims batch set aside: where it was read, its episode and why."""

    topic: str
    partition: int
    offset: int
    episode: SourcePosition
    reason: str

    def headers(self) -> list[tuple[str, bytes]]:
        """The dead letter's headers, as the formation stage writes them (``engram dlq list``
        reads them), with the episode's position as well."""
        return [
            *dead_letter_headers(
                UNPROJECTABLE_KIND,
                self.reason,
                topic=self.topic,
                partition=self.partition,
                offset=self.offset,
            ),
            ("engram.episode.topic", self.episode.topic.encode()),
            ("engram.episode.partition", str(self.episode.partition).encode()),
            ("engram.episode.offset", str(self.episode.offset).encode()),
        ]


async def set_aside(
    conn: asyncpg.Connection, quarantined: Quarantined, *, next_offset: int
) -> bool:
    """Park the batch's episode and store ``next_offset`` for its partition, in one transaction;
    whether it was set aside now (not when a commit before this one had already passed it)."""
    async with transaction(conn):
        stored = await BELIEFS_TRACKING.stored(
            conn, quarantined.topic, quarantined.partition, lock=True
        )
        if stored is not None and quarantined.offset < stored:
            return False
        episode = quarantined.episode
        await backlog.park(
            conn, (episode.topic, episode.partition, episode.offset), kind=UNPROJECTABLE_KIND
        )
        await advance_offset(
            conn,
            topic=quarantined.topic,
            partition=quarantined.partition,
            next_offset=next_offset,
        )
    return True
