"""``project.formed_through``: owed when a project's formed watermark moves.

The watermark is recomputed from the formation backlog (``engram.watermarks``), not published
as an event, so the notifier reads it: each pass, for every project with an enabled endpoint
subscribed to it, the watermark is read once and a delivery owed to each such endpoint whose
last notice (``formed_noticed``) is below it. The event's id is a name of the project and the
offset, so two notifiers reading the same watermark owe it once. Only moves are news: a project
whose watermark stands still owes nothing, however many passes read it.
"""

from __future__ import annotations

from datetime import UTC, datetime

import asyncpg

from engram.notifications.payloads import delivery_id, formed_body, formed_event_id
from engram.schemas.webhooks import FORMED_THROUGH
from engram.watermarks.backlog import watermark


async def record_formed_through(pool: asyncpg.Pool, *, now: datetime | None = None) -> int:
    """One pass over the subscribed projects; the deliveries written."""
    projects = await pool.fetch(
        "SELECT DISTINCT tenant, project FROM public.webhook_endpoint "
        "WHERE disabled_at IS NULL AND $1 = ANY(events) ORDER BY tenant, project",
        FORMED_THROUGH,
    )
    written = 0
    for row in projects:
        tenant, project = row["tenant"], row["project"]
        mark = await watermark(pool, tenant=tenant, project=project)
        if mark.formed_offset is None:
            continue
        written += await _owe(pool, tenant, project, mark.formed_offset, mark.parked, now)
    return written


async def _owe(
    pool: asyncpg.Pool,
    tenant: str,
    project: str,
    formed_offset: int,
    parked: int,
    now: datetime | None,
) -> int:
    event_id = formed_event_id(tenant, project, formed_offset)
    body = formed_body(tenant, project, formed_offset, parked, now or datetime.now(UTC)).decode()
    async with pool.acquire() as conn, conn.transaction():
        behind = await conn.fetch(
            "UPDATE public.webhook_endpoint SET formed_noticed = $3 "
            "WHERE tenant = $1 AND project = $2 AND disabled_at IS NULL AND $4 = ANY(events) "
            "AND (formed_noticed IS NULL OR formed_noticed < $3) RETURNING endpoint_id",
            tenant,
            project,
            formed_offset,
            FORMED_THROUGH,
        )
        if not behind:
            return 0
        endpoints = [row["endpoint_id"] for row in behind]
        written = await conn.fetch(
            "INSERT INTO public.webhook_delivery (delivery_id, endpoint_id, tenant, project, "
            "event_type, event_id, payload) "
            "SELECT d, e, $3, $4, $5, $6, $7 FROM unnest($1::uuid[], $2::uuid[]) AS u(d, e) "
            "ON CONFLICT DO NOTHING RETURNING sequence",
            [delivery_id(e, event_id) for e in endpoints],
            endpoints,
            tenant,
            project,
            FORMED_THROUGH,
            event_id,
            body,
        )
    return len(written)
