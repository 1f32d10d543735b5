"""Which topics are copies made by ``engram log encrypt``, and whether each has finished.

A copy is read by a worker or a re-derivation only once it has finished: a stopped copy holds a
prefix of the source (exactly, record for record: :mod:`engram.ingest.log_encryption`), and a
generation formed from it would be missing the rest of everyone's memory without anything
saying so. :func:`begin_copy` marks a copy unfinished before its first record is appended (and
again when a finished copy is brought up to date), :func:`finish_copy` marks it finished after
its last, and :func:`unfinished_copy` is what the commands that read the log ask at start.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

import asyncpg

from engram.infra.errors import EngramFailure


@dataclass(frozen=True)
class LogCopy:
    target: str
    source: str
    started_at: datetime
    finished_at: datetime | None
    records: int


async def begin_copy(pool: asyncpg.Pool | asyncpg.Connection, *, source: str, target: str) -> None:
    """Mark ``target`` an unfinished copy of ``source``; refused when it copies another topic."""
    copying = await pool.fetchval(
        """
        INSERT INTO public.log_copy (target, source) VALUES ($1, $2)
        ON CONFLICT (target) DO UPDATE SET started_at = now(), finished_at = NULL
            WHERE log_copy.source = EXCLUDED.source
        RETURNING source
        """,
        target,
        source,
    )
    if copying is None:
        other = await pool.fetchval("SELECT source FROM public.log_copy WHERE target = $1", target)
        raise CopiesAnotherTopic(target, str(other), source)


async def finish_copy(
    pool: asyncpg.Pool | asyncpg.Connection, *, target: str, records: int
) -> None:
    await pool.execute(
        "UPDATE public.log_copy SET finished_at = now(), records = $2 WHERE target = $1",
        target,
        records,
    )


async def copy_of(pool: asyncpg.Pool | asyncpg.Connection, topic: str) -> LogCopy | None:
    """What is known of ``topic`` as a copy (None: not one made by ``engram log encrypt``)."""
    row = await pool.fetchrow(
        "SELECT target, source, started_at, finished_at, records FROM public.log_copy "
        "WHERE target = $1",
        topic,
    )
    return None if row is None else LogCopy(**dict(row))


async def unfinished_copy(pool: asyncpg.Pool | asyncpg.Connection, topic: str) -> LogCopy | None:
    found = await copy_of(pool, topic)
    return found if found is not None and found.finished_at is None else None


class CopiesAnotherTopic(EngramFailure, ValueError):
    code = "log_copy_of_another"

    def __init__(self, target: str, other: str, source: str) -> None:
        super().__init__(
            f"{target} is a copy of {other}, not of {source}: copy {source} into a new topic"
        )


class UnfinishedCopy(EngramFailure, RuntimeError):
    code = "log_copy_unfinished"

    def __init__(self, copy: LogCopy) -> None:
        super().__init__(
            f"{copy.target} is a copy of {copy.source} that `engram log encrypt` has not "
            f"finished (started {copy.started_at:%Y-%m-%d %H:%M:%S %Z}): it holds only the "
            f"start of the log. Run `engram log encrypt --from {copy.source} --to "
            f"{copy.target}` again (it goes on where it stopped), then start this again"
        )
