"""Reading an erasure's receipt row (``erasure_receipt``, written by the projector with the
erasure: :mod:`engram.projections.beliefs.receipts`), scoped to the principal it was about."""

from __future__ import annotations

import uuid

import asyncpg

from engram.generations.reading import reading
from engram.schemas.common import principal_hash
from engram.watermarks.waiting import poll_until


async def erasure_row(
    db: asyncpg.Connection | asyncpg.Pool, *, event_id: uuid.UUID, tenant: str, principal: str
) -> asyncpg.Record | None:
    """The receipt of ``event_id`` if it was about this tenant's principal and has applied;
    None otherwise (not applied yet, never appended, or someone else's: one answer)."""
    async with reading(db, principal=(tenant, principal)) as conn:
        row: asyncpg.Record | None = await conn.fetchrow(
            "SELECT * FROM erasure_receipt "
            "WHERE event_id = $1 AND tenant = $2 AND principal_hash = $3",
            event_id,
            tenant,
            principal_hash(tenant, principal),
        )
    return row


async def wait_for_erasure(
    pool: asyncpg.Pool,
    *,
    event_id: uuid.UUID,
    tenant: str,
    principal: str,
    timeout_s: float,
) -> asyncpg.Record | None:
    """:func:`erasure_row`, asked again until it is there or ``timeout_s`` has passed."""
    found: list[asyncpg.Record] = []

    async def applied() -> bool:
        row = await erasure_row(pool, event_id=event_id, tenant=tenant, principal=principal)
        found.extend([] if row is None else [row])
        return row is not None

    await poll_until(applied, timeout_s=timeout_s, poll_s=0.2)
    return found[0] if found else None
