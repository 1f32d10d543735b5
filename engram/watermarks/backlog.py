"""The formation backlog in PostgreSQL: what the formation stage has read, its attempts, what
was parked, and the watermarks recomputed from it.

The formation stage records an episode as ``pending`` before it publishes the episode's claims
batch; the belief projector marks it ``formed`` in the transaction that commits its beliefs. So
``formed_offset`` — every episode of the project at or below it formed or parked — can only
count an episode once its beliefs are in PostgreSQL, however many workers finish in whatever
order. Metadata only: no message content is ever stored here.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from dataclasses import dataclass, fields
from datetime import datetime

import asyncpg

from engram.infra.errors import EngramFailure

_WATERMARK = """
WITH open AS (
    SELECT min("offset") AS lowest, count(*) AS pending, min(appended_at) AS oldest
    FROM formation_backlog
    WHERE tenant = $1 AND project = $2 AND state IN ('pending', 'requeued')
), log AS (
    SELECT max("offset") AS log_offset FROM formation_backlog WHERE tenant = $1 AND project = $2
)
SELECT
    l.log_offset,
    CASE WHEN o.lowest IS NULL THEN l.log_offset
      ELSE (SELECT max("offset") FROM formation_backlog
            WHERE tenant = $1 AND project = $2 AND "offset" < o.lowest)
    END AS formed_offset,
    (SELECT count(*) FROM formation_backlog
      WHERE tenant = $1 AND project = $2 AND state = 'parked') AS parked,
    o.pending, o.oldest
FROM open o, log l
"""
"""A project's watermarks, each from an index, so a read costs the same at any history length.

The formed watermark is the highest offset below the lowest open (pending or requeued) episode:
every episode below that is formed or parked, the only other states. The open episodes come
from the partial index of open rows, the parked count from that of parked rows (migration
0018), and the two maxima from a backward scan of ``(tenant, project, offset)``. The same
definition read as one scan of the project's rows (what this replaced, and what
``tests/integration/test_watermark_query.py`` holds it to) cost ~1.1 ms at 500 episodes and
grew with every episode: the read API's freshness and ``wait_for_offset`` poll it."""


@dataclass(frozen=True)
class Watermark:
    tenant: str
    project: str
    log_offset: int | None
    formed_offset: int | None
    parked: int
    pending: int
    oldest_pending_appended_at: datetime | None

    def formed_through(self, offset: int) -> bool:
        return self.formed_offset is not None and self.formed_offset >= offset


@dataclass(frozen=True)
class ParkedEpisode:
    episode_id: uuid.UUID
    partition: int
    offset: int
    attempts: int
    failure_kind: str | None
    first_failed_at: datetime | None
    last_failed_at: datetime | None
    parked_at: datetime | None


@dataclass(frozen=True)
class BacklogEntry:
    topic: str
    partition: int
    offset: int
    tenant: str
    project: str
    episode_id: uuid.UUID
    occurred_at: datetime
    appended_at: datetime
    principal_hash: str | None = None
    """Whose episode, as the SHA-256 of tenant/principal (for a session's diagnosis; never the
    name, which a forgotten principal's later episodes must not leave here); None on entries
    recorded before migration 0011 and on a forgotten principal's."""
    session: str | None = None
    log_words: str | None = None
    """How the event holds a person's words on the log: ``clear`` (a plaintext turn, memory or
    correction), ``sealed`` or ``none`` (ids and hashes only) — what an erasure's receipt counts
    as still readable there; None on entries recorded before migration 0031."""


_ENTRY_FIELDS = tuple(field.name for field in fields(BacklogEntry))  # the INSERT's column order

Position = tuple[str, int, int]
"""Where an episode sits in the log: topic, partition, offset (the backlog's primary key)."""

_RECORD_PENDING_MANY = """
INSERT INTO formation_backlog AS b (topic, partition, "offset", tenant, project, episode_id,
                                    occurred_at, appended_at, principal_hash, session,
                                    log_words)
SELECT * FROM unnest($1::text[], $2::integer[], $3::bigint[], $4::text[], $5::text[],
                     $6::uuid[], $7::timestamptz[], $8::timestamptz[], $9::text[], $10::text[],
                     $11::text[])
ON CONFLICT (topic, partition, "offset") DO UPDATE SET topic = EXCLUDED.topic
RETURNING b.topic, b.partition, b."offset", b.attempts
"""


async def record_pending_many(
    db: asyncpg.Pool | asyncpg.Connection, entries: Sequence[BacklogEntry]
) -> dict[Position, int]:
    """Record episodes as read, in one statement, and return each one's failed attempts so far.

    A redelivered episode keeps whatever state it reached, and its attempts keep counting. One
    position may appear only once (PostgreSQL refuses to update a row twice in one statement):
    the caller passes distinct positions.
    """
    if not entries:
        return {}
    columns = [[getattr(entry, name) for entry in entries] for name in _ENTRY_FIELDS]
    rows = await db.fetch(_RECORD_PENDING_MANY, *columns)
    return {(row["topic"], row["partition"], row["offset"]): row["attempts"] for row in rows}


async def record_skipped(db: asyncpg.Pool | asyncpg.Connection, entry: BacklogEntry) -> None:
    """Record an episode this generation does not form (another principal's, in a generation
    built for some principals) as formed at once, so the project's watermark moves past it."""
    await db.execute(
        """
        INSERT INTO formation_backlog (topic, partition, "offset", tenant, project, episode_id,
                                       occurred_at, appended_at, principal_hash, session,
                                       log_words, state, formed_at)
        VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, 'formed', now())
        ON CONFLICT (topic, partition, "offset") DO UPDATE SET state = 'formed', formed_at = now()
        WHERE formation_backlog.state <> 'formed'
        """,
        entry.topic,
        entry.partition,
        entry.offset,
        entry.tenant,
        entry.project,
        entry.episode_id,
        entry.occurred_at,
        entry.appended_at,
        entry.principal_hash,
        entry.session,
        entry.log_words,
    )


async def park(db: asyncpg.Connection, position: tuple[str, int, int], *, kind: str) -> None:
    """Park one episode, by (topic, partition, offset), whatever its state: its claims batch
    cannot be projected (:mod:`engram.projections.beliefs.quarantine`), in the transaction that moves the
    projector past it. Counted as a failed attempt, so ``engram formation parked`` shows when."""
    await db.execute(
        """
        UPDATE formation_backlog SET state = 'parked', failure_kind = $4,
            attempts = attempts + 1, first_failed_at = coalesce(first_failed_at, now()),
            last_failed_at = now(), parked_at = now()
        WHERE topic = $1 AND partition = $2 AND "offset" = $3
        """,
        *position,
        kind,
    )


async def mark_formed(db: asyncpg.Connection, positions: Sequence[tuple[str, int, int]]) -> None:
    """Mark episodes formed, by (topic, partition, offset): called by the belief projector
    inside the transaction that commits their beliefs, once per chunk."""
    if positions:
        topics, partitions, offsets = (list(column) for column in zip(*positions, strict=True))
        await db.execute(
            """
            UPDATE formation_backlog b SET state = 'formed', formed_at = now()
            FROM unnest($1::text[], $2::int[], $3::bigint[]) AS f(topic, partition, "offset")
            WHERE (b.topic, b.partition, b."offset") = (f.topic, f.partition, f."offset")
              AND b.state <> 'formed'
            """,
            topics,
            partitions,
            offsets,
        )


async def record_failure(db: asyncpg.Pool, entry: BacklogEntry, *, kind: str, park: bool) -> int:
    """Count one failed attempt (and park when the attempts are spent); return the attempts."""
    attempts: int = await db.fetchval(
        """
        UPDATE formation_backlog SET attempts = attempts + 1, failure_kind = $4,
            first_failed_at = coalesce(first_failed_at, now()), last_failed_at = now(),
            state = CASE WHEN $5 THEN 'parked' ELSE state END,
            parked_at = CASE WHEN $5 THEN now() ELSE parked_at END
        WHERE topic = $1 AND partition = $2 AND "offset" = $3
        RETURNING attempts
        """,
        entry.topic,
        entry.partition,
        entry.offset,
        kind,
        park,
    )
    return attempts


async def watermark(
    db: asyncpg.Pool | asyncpg.Connection, *, tenant: str, project: str
) -> Watermark:
    row = await db.fetchrow(_WATERMARK, tenant, project)
    assert row is not None
    return Watermark(
        tenant=tenant,
        project=project,
        log_offset=row["log_offset"],
        formed_offset=row["formed_offset"],
        parked=row["parked"],
        pending=row["pending"],
        oldest_pending_appended_at=row["oldest"],
    )


async def list_parked(db: asyncpg.Pool, *, tenant: str, project: str) -> list[ParkedEpisode]:
    rows = await db.fetch(
        """
        SELECT episode_id, partition, "offset", attempts, failure_kind, first_failed_at,
               last_failed_at, parked_at
        FROM formation_backlog WHERE tenant = $1 AND project = $2 AND state = 'parked'
        ORDER BY "offset"
        """,
        tenant,
        project,
    )
    return [
        ParkedEpisode(
            row["episode_id"],
            row["partition"],
            row["offset"],
            row["attempts"],
            row["failure_kind"],
            row["first_failed_at"],
            row["last_failed_at"],
            row["parked_at"],
        )
        for row in rows
    ]


class AmbiguousUnpark(EngramFailure, LookupError):
    """An episode id parked for more than one principal of a project: event ids are unique per
    principal, not per project, so an id alone would unpark another principal's episode too.
    The operator names the log entry (``--offset``, as ``engram formation parked`` lists it)."""

    code = "ambiguous_unpark"

    def __init__(self, episode_id: uuid.UUID, offsets: Sequence[int]) -> None:
        self.offsets = list(offsets)
        listed = ", ".join(str(offset) for offset in self.offsets)
        super().__init__(
            f"episode {episode_id} is parked for more than one principal (offsets {listed}): "
            "pass --offset to say which"
        )


async def unpark(
    db: asyncpg.Pool,
    *,
    tenant: str,
    project: str,
    episode_id: uuid.UUID,
    actor: str,
    offset: int | None = None,
) -> int:
    """Make a parked episode formable again (the watermark may move down) and audit who did it.
    Returns how many log entries of that episode were unparked: every entry of the id when
    they are one principal's (a retried append), the one at ``offset`` when it is given.
    Raises :class:`AmbiguousUnpark` when the id is parked for several principals and no
    ``offset`` says which."""
    async with db.acquire() as conn, conn.transaction():
        parked = await conn.fetch(
            'SELECT "offset", principal_hash FROM formation_backlog '
            "WHERE tenant = $1 AND project = $2 AND episode_id = $3 AND state = 'parked' "
            'AND ($4::bigint IS NULL OR "offset" = $4) ORDER BY "offset" FOR UPDATE',
            tenant,
            project,
            episode_id,
            offset,
        )
        if len({row["principal_hash"] for row in parked}) > 1:
            raise AmbiguousUnpark(episode_id, [row["offset"] for row in parked])
        unparked = await conn.fetch(
            "UPDATE formation_backlog SET state = 'requeued', attempts = 0, parked_at = NULL "
            "WHERE tenant = $1 AND project = $2 AND episode_id = $3 AND state = 'parked' "
            'AND "offset" = ANY($4::bigint[]) RETURNING "offset"',
            tenant,
            project,
            episode_id,
            [row["offset"] for row in parked],
        )
        if unparked:
            await conn.execute(
                "INSERT INTO formation_audit (action, tenant, project, episode_id, actor) "
                "VALUES ('unpark', $1, $2, $3, $4)",
                tenant,
                project,
                episode_id,
                actor,
            )
        return len(unparked)


async def claim_requeued(db: asyncpg.Pool, *, limit: int = 16) -> list[BacklogEntry]:
    """Take requeued episodes for re-formation; SKIP LOCKED lets several workers share them."""
    rows = await db.fetch(
        """
        UPDATE formation_backlog b SET state = 'pending'
        FROM (SELECT topic, partition, "offset" FROM formation_backlog WHERE state = 'requeued'
              ORDER BY "offset" LIMIT $1 FOR UPDATE SKIP LOCKED) r
        WHERE (b.topic, b.partition, b."offset") = (r.topic, r.partition, r."offset")
        RETURNING b.*
        """,
        limit,
    )
    return [
        BacklogEntry(
            row["topic"],
            row["partition"],
            row["offset"],
            row["tenant"],
            row["project"],
            row["episode_id"],
            row["occurred_at"],
            row["appended_at"],
            row["principal_hash"],
            row["session"],
            row["log_words"],
        )
        for row in rows
    ]
