"""The claims batches each principal's beliefs were resolved from: ``claims_history``.

:mod:`formation.ordering` decides the canonical order and when a principal must be resolved
again; this reads and writes what that needs: the order key of each principal's last applied
batch, the batches kept for a principal, and, for a re-resolution, emptying the principal's
projected rows so that resolution starts from nothing. Everything runs inside the projector's
chunk transaction.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable

import asyncpg

from formation.ordering import PrincipalKey, order_key
from schemas.claims import ClaimsBatchFormed, decode_claims_batch

_RESOLVED_BY_PRINCIPAL = (
    "evidence",
    "refusal",
    "belief_rejection",
    "belief_tombstone",
    "belief",
    "consolidation_run",
    "entity",
)
"""What resolving a principal's batches writes (children first), and so what a re-resolution
empties. The outbox keeps the events already queued; the principal tombstone stays."""


def _columns(principals: Collection[PrincipalKey]) -> tuple[list[str], list[str]]:
    ordered = sorted(principals)
    return [t for t, _ in ordered], [p for _, p in ordered]


async def last_applied(
    conn: asyncpg.Connection, principals: Collection[PrincipalKey]
) -> dict[PrincipalKey, bytes]:
    """The order key of each principal's last applied batch (absent: none applied yet)."""
    if not principals:
        return {}
    rows = await conn.fetch(
        """
        SELECT k.tenant, k.principal, last.order_key
        FROM unnest($1::text[], $2::text[]) AS k(tenant, principal)
        CROSS JOIN LATERAL (
            SELECT h.order_key FROM claims_history h
            WHERE h.tenant = k.tenant AND h.principal = k.principal
            ORDER BY h.order_key DESC LIMIT 1
        ) last
        """,
        *_columns(principals),
    )
    return {(r["tenant"], r["principal"]): bytes(r["order_key"]) for r in rows}


async def kept_batches(
    conn: asyncpg.Connection, principals: Collection[PrincipalKey]
) -> list[ClaimsBatchFormed]:
    """Every batch kept for ``principals``."""
    if not principals:
        return []
    rows = await conn.fetch(
        """
        SELECT h.payload FROM claims_history h
        JOIN unnest($1::text[], $2::text[]) AS k(tenant, principal) USING (tenant, principal)
        """,
        *_columns(principals),
    )
    return [decode_claims_batch(bytes(r["payload"])) for r in rows]


async def empty_principals(conn: asyncpg.Connection, principals: Collection[PrincipalKey]) -> None:
    """Delete what resolution wrote for ``principals``, and the batches kept for them (they
    are written again, redacted, with the re-resolution's rows)."""
    if not principals:
        return
    tenants, names = _columns(principals)
    for table in (*_RESOLVED_BY_PRINCIPAL, "claims_history"):
        await conn.execute(
            f"DELETE FROM {table} t USING unnest($1::text[], $2::text[]) AS k(tenant, principal) "
            "WHERE (t.tenant, t.principal) = (k.tenant, k.principal)",
            tenants,
            names,
        )


async def keep_batches(conn: asyncpg.Connection, batches: Iterable[ClaimsBatchFormed]) -> None:
    """Keep applied batches for a later re-resolution (a batch kept already stays as it is)."""
    rows = [
        (b.batch_id, b.tenant, b.principal, order_key(b), b.model_dump_json().encode())
        for b in batches
    ]
    if not rows:
        return
    ids, tenants, principals, keys, payloads = (list(c) for c in zip(*rows, strict=True))
    await conn.execute(
        """
        INSERT INTO claims_history (run_id, tenant, principal, order_key, payload)
        SELECT * FROM unnest($1::uuid[], $2::text[], $3::text[], $4::bytea[], $5::bytea[])
        ON CONFLICT (run_id) DO NOTHING
        """,
        ids,
        tenants,
        principals,
        keys,
        payloads,
    )
