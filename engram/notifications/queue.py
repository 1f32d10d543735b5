"""Deliveries owed, claimed and settled in PostgreSQL (migration 0029).

A sender claims a batch of due deliveries in one short transaction — ``FOR UPDATE SKIP LOCKED``,
so two senders never take the same row — and leases them (``lease``, ``leased_until``): the
attempt itself, an HTTP request to someone else's server, runs with no transaction or row lock
open, and its outcome is recorded afterwards only if the lease is still the sender's. A sender
killed mid-attempt leaves the lease to lapse; the delivery is then claimed again and sent with
the same ``webhook-id`` (at least once; a receiver deduplicates on the id).

Each endpoint's deliveries go one at a time, in the order they were owed (``sequence``): a
delivery is due only when no earlier one of its endpoint is still pending, so a retried
delivery holds back the later ones until it is delivered or parked.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from dataclasses import dataclass

import asyncpg

from engram.notifications.errors import UnknownDelivery
from engram.schemas.api import NotificationFreshness, WebhookDelivery

_CLAIM = """
WITH due AS (
    SELECT d.sequence
    FROM public.webhook_delivery d
    JOIN public.webhook_endpoint e USING (endpoint_id)
    WHERE d.state = 'pending' AND d.due_at <= now()
      AND (d.leased_until IS NULL OR d.leased_until < now())
      AND e.disabled_at IS NULL
      AND NOT EXISTS (
          SELECT 1 FROM public.webhook_delivery p
          WHERE p.endpoint_id = d.endpoint_id AND p.state = 'pending' AND p.sequence < d.sequence)
    ORDER BY d.due_at, d.sequence
    LIMIT $1
    FOR UPDATE OF d SKIP LOCKED
)
UPDATE public.webhook_delivery w
SET lease = $2, leased_until = now() + make_interval(secs => $3), attempts = w.attempts + 1
FROM due, public.webhook_endpoint e
WHERE w.sequence = due.sequence AND e.endpoint_id = w.endpoint_id
RETURNING w.sequence, w.delivery_id, w.endpoint_id, w.tenant, w.event_type, w.payload,
          w.attempts, w.lease, e.url
"""


@dataclass(frozen=True)
class Claimed:
    """A delivery leased to one sender for one attempt."""

    sequence: int
    delivery_id: uuid.UUID
    endpoint_id: uuid.UUID
    tenant: str
    event_type: str
    payload: str
    attempts: int
    """Attempts made, this one included."""
    lease: uuid.UUID
    url: str


async def claim(pool: asyncpg.Pool, *, limit: int, lease_s: float) -> list[Claimed]:
    """Lease up to ``limit`` due deliveries (each endpoint's earliest pending one at most)."""
    rows = await pool.fetch(_CLAIM, limit, uuid.uuid4(), lease_s)
    return sorted((Claimed(**dict(row)) for row in rows), key=lambda c: c.sequence)


@dataclass(frozen=True)
class Failure:
    """A failed attempt: what the receiver answered (or what went wrong) and what follows."""

    status: int | None
    error: str
    final: bool
    """Parked at once (a 4xx other than 408/429, a redirect, a refused destination)."""
    disable: str | None = None
    """Disable the endpoint with this reason (a destination refused at send time)."""


async def settle_delivered(pool: asyncpg.Pool, claimed: Claimed, status: int) -> bool:
    """Record a delivery; the endpoint's run of failures ends. False when the lease had lapsed
    and the delivery is another sender's now (its outcome is that sender's to record)."""
    async with pool.acquire() as conn, conn.transaction():
        done = await conn.fetchval(
            "UPDATE public.webhook_delivery SET state = 'delivered', delivered_at = now(), "
            "last_status = $3, last_error = NULL, lease = NULL, leased_until = NULL "
            "WHERE sequence = $1 AND lease = $2 AND state = 'pending' RETURNING sequence",
            claimed.sequence,
            claimed.lease,
            status,
        )
        if done is None:
            return False
        await conn.execute(
            "UPDATE public.webhook_endpoint SET consecutive_failures = 0, failing_since = NULL "
            "WHERE endpoint_id = $1 AND consecutive_failures > 0",
            claimed.endpoint_id,
        )
    return True


async def settle_failed(
    pool: asyncpg.Pool,
    claimed: Claimed,
    failure: Failure,
    *,
    retry_in_s: float | None,
    disable_after_failures: int,
    disable_after_s: float,
) -> str:
    """Record a failed attempt: ``retried`` (due again in ``retry_in_s``), ``parked`` (final, or
    ``retry_in_s`` None: its attempts are spent) or ``lapsed`` (the lease had lapsed). The
    endpoint's run of failures grows, and it is disabled once the run is ``disable_after_failures``
    long and ``disable_after_s`` old (or at once for ``failure.disable``)."""
    park = failure.final or retry_in_s is None
    async with pool.acquire() as conn, conn.transaction():
        state = await conn.fetchval(
            "UPDATE public.webhook_delivery SET last_status = $3, last_error = $4, lease = NULL, "
            "leased_until = NULL, state = CASE WHEN $5 THEN 'parked' ELSE 'pending' END, "
            "parked_at = CASE WHEN $5 THEN now() END, "
            "due_at = CASE WHEN $5 THEN due_at ELSE now() + make_interval(secs => $6) END "
            "WHERE sequence = $1 AND lease = $2 AND state = 'pending' RETURNING state",
            claimed.sequence,
            claimed.lease,
            failure.status,
            failure.error[:500],
            park,
            retry_in_s or 0.0,
        )
        if state is None:
            return "lapsed"
        await conn.execute(
            """
            UPDATE public.webhook_endpoint SET
                consecutive_failures = consecutive_failures + 1,
                failing_since = coalesce(failing_since, now()),
                disabled_at = CASE
                    WHEN disabled_at IS NOT NULL THEN disabled_at
                    WHEN $2::text IS NOT NULL
                      OR (consecutive_failures + 1 >= $3
                          AND now() - coalesce(failing_since, now())
                              >= make_interval(secs => $4)) THEN now() END,
                disabled_reason = CASE
                    WHEN disabled_at IS NOT NULL THEN disabled_reason
                    WHEN $2::text IS NOT NULL THEN $2
                    WHEN consecutive_failures + 1 >= $3
                      AND now() - coalesce(failing_since, now()) >= make_interval(secs => $4)
                    THEN format('%s consecutive failed attempts since %s; the last: %s',
                                consecutive_failures + 1,
                                to_char(coalesce(failing_since, now()) AT TIME ZONE 'UTC',
                                        'YYYY-MM-DD"T"HH24:MI:SS"Z"'),
                                $5::text) END
            WHERE endpoint_id = $1
            """,
            claimed.endpoint_id,
            failure.disable,
            disable_after_failures,
            disable_after_s,
            failure.error[:200],
        )
    return str(state) if state == "parked" else "retried"


async def list_deliveries(
    db: asyncpg.Pool | asyncpg.Connection,
    *,
    tenant: str,
    endpoint_id: uuid.UUID | None = None,
    failed: bool = False,
    limit: int = 100,
) -> list[WebhookDelivery]:
    """The tenant's deliveries, newest first (``failed``: only the parked ones): metadata,
    never a body."""
    rows = await db.fetch(
        "SELECT delivery_id AS id, endpoint_id, project, event_type AS type, event_id, state, "
        "attempts, "
        "CASE WHEN state = 'pending' THEN greatest(due_at, leased_until) END AS next_attempt_at, "
        "last_status, last_error, created_at, delivered_at, parked_at "
        "FROM public.webhook_delivery WHERE tenant = $1 "
        "AND ($2::uuid IS NULL OR endpoint_id = $2) AND (NOT $3 OR state = 'parked') "
        "ORDER BY sequence DESC LIMIT $4",
        tenant,
        endpoint_id,
        failed,
        limit,
    )
    return [WebhookDelivery(**dict(row)) for row in rows]


async def retry_deliveries(
    db: asyncpg.Pool | asyncpg.Connection, *, tenant: str, delivery_ids: Sequence[uuid.UUID]
) -> int:
    """Make parked deliveries due again now, with fresh attempts; the number requeued.
    An id that is not the tenant's, or not parked, is :class:`UnknownDelivery`."""
    requeued = await db.fetch(
        "UPDATE public.webhook_delivery SET state = 'pending', parked_at = NULL, attempts = 0, "
        "due_at = now() WHERE tenant = $1 AND delivery_id = ANY($2::uuid[]) "
        "AND state = 'parked' RETURNING delivery_id",
        tenant,
        list(delivery_ids),
    )
    missing = set(delivery_ids) - {row["delivery_id"] for row in requeued}
    if missing:
        raise UnknownDelivery(
            f"no parked delivery {', '.join(sorted(map(str, missing)))} in tenant {tenant}"
        )
    return len(requeued)


async def retry_endpoint(
    db: asyncpg.Pool | asyncpg.Connection, *, tenant: str, endpoint_id: uuid.UUID
) -> int:
    """Requeue every parked delivery of the endpoint; the number requeued."""
    rows = await db.fetch(
        "UPDATE public.webhook_delivery SET state = 'pending', parked_at = NULL, attempts = 0, "
        "due_at = now() WHERE tenant = $1 AND endpoint_id = $2 AND state = 'parked' "
        "RETURNING sequence",
        tenant,
        endpoint_id,
    )
    return len(rows)


async def forget_principal(conn: asyncpg.Connection, tenant: str, principal: str) -> None:
    """Drop every delivery that names the principal (undelivered ones are never sent); in the
    forgetting's transaction. The ``principal.forgotten`` notice comes after, from the topic."""
    await conn.execute(
        "DELETE FROM public.webhook_delivery WHERE tenant = $1 AND principal = $2",
        tenant,
        principal,
    )


async def sweep_delivered(pool: asyncpg.Pool, *, keep_days: float, limit: int = 1000) -> int:
    """Delete up to ``limit`` deliveries delivered more than ``keep_days`` ago."""
    rows = await pool.fetch(
        "DELETE FROM public.webhook_delivery WHERE sequence IN ("
        "SELECT sequence FROM public.webhook_delivery WHERE state = 'delivered' "
        "AND delivered_at < now() - make_interval(secs => $1) LIMIT $2) RETURNING sequence",
        keep_days * 86_400,
        limit,
    )
    return len(rows)


_FRESHNESS = """
SELECT (SELECT count(*) FROM public.webhook_endpoint
         WHERE tenant = $1 AND project = $2 AND disabled_at IS NULL)::int AS endpoints,
       (SELECT count(*) FROM public.webhook_endpoint
         WHERE tenant = $1 AND project = $2 AND disabled_at IS NOT NULL)::int AS disabled,
       count(*) FILTER (WHERE d.state = 'pending')::int AS pending,
       count(*) FILTER (WHERE d.state = 'parked')::int AS parked,
       extract(epoch FROM now() - min(d.created_at) FILTER (WHERE d.state = 'pending'))
           AS lag_s
FROM public.webhook_delivery d
WHERE d.tenant = $1 AND d.project = $2 AND d.state <> 'delivered'
"""


async def delivery_freshness(
    db: asyncpg.Pool | asyncpg.Connection, *, tenant: str, project: str
) -> NotificationFreshness | None:
    """How far the project's endpoints have been told; None when it has no endpoint."""
    row = await db.fetchrow(_FRESHNESS, tenant, project)
    assert row is not None
    if row["endpoints"] == 0 and row["disabled"] == 0:
        return None
    return NotificationFreshness(
        endpoints=row["endpoints"],
        disabled=row["disabled"],
        pending=row["pending"],
        parked=row["parked"],
        lag_seconds=max(float(row["lag_s"] or 0.0), 0.0),
    )
