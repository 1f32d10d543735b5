"""Freshness: how far formation has got, per project, from the backlog's watermarks, and how
far the message indexer and the embedding follower have (their stored offsets against the same
episodes)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime

import asyncpg

from engram.notifications import delivery_freshness
from engram.projections.messages import FOLLOWER_PREFIX, INDEXER
from engram.schemas.api import Freshness
from engram.schemas.common import principal_hash
from engram.watermarks.backlog import watermark
from engram.watermarks.waiting import poll_until

__all__ = [
    "Freshness",
    "PrincipalProgress",
    "freshness",
    "principal_progress",
    "wait_formed_through",
]


@dataclass(frozen=True, slots=True)
class PrincipalProgress:
    """How far formation has read what one principal said, over all their projects: the
    latest event time of an episode of theirs that is formed, how many are still pending (and
    the earliest event time among them), how many are parked."""

    formed_until: datetime | None
    pending: int
    pending_since: datetime | None
    parked: int


async def principal_progress(
    db: asyncpg.Pool | asyncpg.Connection, *, tenant: str, principal: str
) -> PrincipalProgress:
    """The backlog's rows of the principal's episodes (by the principal's hash, as the backlog
    keeps them), summed: what the inspector shows as "up to date until"."""
    row = await db.fetchrow(
        "SELECT max(occurred_at) FILTER (WHERE state = 'formed') AS formed_until, "
        "count(*) FILTER (WHERE state IN ('pending', 'requeued'))::int AS pending, "
        "min(occurred_at) FILTER (WHERE state IN ('pending', 'requeued')) AS pending_since, "
        "count(*) FILTER (WHERE state = 'parked')::int AS parked "
        "FROM formation_backlog WHERE tenant = $1 AND principal_hash = $2",
        tenant,
        principal_hash(tenant, principal),
    )
    return PrincipalProgress(
        row["formed_until"], row["pending"], row["pending_since"], row["parked"]
    )


async def freshness(
    db: asyncpg.Pool | asyncpg.Connection, *, tenant: str, project: str, now: datetime | None = None
) -> Freshness:
    mark = await watermark(db, tenant=tenant, project=project)
    policy = await db.fetchval(
        "SELECT policy_version FROM consolidation_run WHERE tenant = $1 AND project = $2 "
        "ORDER BY source_offset DESC LIMIT 1",
        tenant,
        project,
    )
    index = await db.fetchrow(_INDEXED, tenant, project, INDEXER)
    vectors = await db.fetchrow(_EMBEDDED, tenant, project, FOLLOWER_PREFIX)
    oldest = mark.oldest_pending_appended_at
    current = now or datetime.now(UTC)
    return Freshness(
        tenant=tenant,
        project=project,
        log_offset=mark.log_offset,
        formed_offset=mark.formed_offset,
        lag_episodes=mark.pending,
        lag_seconds=max((current - oldest).total_seconds(), 0.0) if oldest else 0.0,
        parked=mark.parked,
        policy_version=policy,
        indexed_offset=index["indexed"] if index else None,
        index_lag_episodes=index["behind"] if index else 0,
        embedding_generation=vectors["generation"] if vectors else None,
        embedded_offset=vectors["embedded"] if vectors else None,
        embedding_lag_episodes=vectors["behind"] if vectors else 0,
        notifications=await delivery_freshness(db, tenant=tenant, project=project),
    )


_INDEXED = """
SELECT max(b."offset") FILTER (WHERE b."offset" < o.next_offset) AS indexed,
       count(*) FILTER (WHERE o.next_offset IS NULL OR b."offset" >= o.next_offset)::int AS behind
FROM formation_backlog b
LEFT JOIN projector_offset o
  ON o.projector = $3 AND o.topic = b.topic AND o.partition = b.partition
WHERE b.tenant = $1 AND b.project = $2
"""
"""The project's episodes the backlog knows, against the indexer's stored offset of their
partition: the last indexed, and how many are not yet."""


_EMBEDDED = """
SELECT g.name AS generation,
       max(b."offset") FILTER (WHERE b."offset" < o.next_offset) AS embedded,
       count(b."offset") FILTER (WHERE o.next_offset IS NULL OR b."offset" >= o.next_offset)::int
           AS behind
FROM public.embedding_generation g
LEFT JOIN formation_backlog b ON b.tenant = $1 AND b.project = $2
LEFT JOIN public.projector_offset o
  ON o.projector = $3 || g.name AND o.topic = b.topic AND o.partition = b.partition
WHERE g.status = 'active'
GROUP BY g.name
"""
"""The same count against the embedding follower's stored offsets for the active generation
(shared by every projection generation, hence ``public``); no row when none is active."""


async def wait_formed_through(
    db: asyncpg.Pool | asyncpg.Connection,
    *,
    tenant: str,
    project: str,
    offset: int,
    timeout_s: float,
    poll_s: float = 0.1,
) -> bool:
    """True once the project is formed through ``offset``; False at the deadline."""

    async def formed() -> bool:
        mark = await watermark(db, tenant=tenant, project=project)
        return mark.formed_through(offset)

    return await poll_until(formed, timeout_s=timeout_s, poll_s=poll_s)
