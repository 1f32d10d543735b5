"""The claims batches each principal's beliefs were resolved from: ``claims_history``.

:mod:`resolution.ordering` decides the canonical order and when a principal must be resolved
again; this reads and writes what that needs: the order key of each principal's last applied
batch, the batches kept for a principal with what undoing each takes (:mod:`resolution.undo`),
and for a re-resolution either undoing the suffix of applied batches after a late one, or
emptying the principal's projected rows so that resolution starts from nothing. Everything runs
inside the projector's chunk transaction.
"""

from __future__ import annotations

import uuid
from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass

import asyncpg

from engram.projections.principal_lock import principal_columns
from engram.projections.rows import columns_of, copy_rows, update_rows
from engram.resolution.beliefs import MUTABLE_BELIEF_COLUMNS
from engram.resolution.ordering import PrincipalKey, order_key
from engram.resolution.undo import BatchUndo, undo_suffix
from engram.schemas.claims import ClaimsBatchFormed, decode_claims_batch

RESOLVED_BY_PRINCIPAL = (
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
        *principal_columns(principals),
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
        *principal_columns(principals),
    )
    return [decode_claims_batch(bytes(r["payload"])) for r in rows]


async def empty_principals(conn: asyncpg.Connection, principals: Collection[PrincipalKey]) -> None:
    """Delete what resolution wrote for ``principals``, and the batches kept for them (they
    are written again, redacted, with the re-resolution's rows)."""
    if not principals:
        return
    tenants, names = principal_columns(principals)
    for table in (*RESOLVED_BY_PRINCIPAL, "claims_history"):
        await conn.execute(
            f"DELETE FROM {table} t USING unnest($1::text[], $2::text[]) AS k(tenant, principal) "
            "WHERE (t.tenant, t.principal) = (k.tenant, k.principal)",
            tenants,
            names,
        )


@dataclass(frozen=True, slots=True)
class KeptBatch:
    """A row of ``claims_history``: an applied batch, its order key, its JSON, its undo record."""

    run_id: uuid.UUID
    tenant: str
    principal: str
    order_key: bytes
    payload: bytes
    undo: bytes


_KEPT_COLUMNS = columns_of(KeptBatch)


async def keep_batches(
    conn: asyncpg.Connection,
    batches: Iterable[tuple[ClaimsBatchFormed, BatchUndo, bytes | None]],
) -> None:
    """Keep applied batches, with what undoing each takes, for a later re-resolution (a batch
    kept already stays as it is). A batch given with the bytes it was decoded from is kept as
    those bytes (readers only decode the payload, and they decode to the batch); one without
    (redacted, or read back from here) is serialised.

    Copied in (:func:`engram.projections.rows.copy_rows`, which falls back to ``ON CONFLICT DO
    NOTHING`` only when a run is kept already: a redelivered batch is left out before this,
    so that is rare) rather than inserted from ``unnest`` of ``bytea`` arrays: a chunk's
    ~1.5 MB of payloads no longer goes through an array on both sides, ~25% less backend CPU
    for this statement on the bench corpus."""
    rows = [
        KeptBatch(
            b.batch_id,
            b.tenant,
            b.principal,
            order_key(b),
            b.model_dump_json().encode() if wire is None else wire,
            u.to_json(),
        )
        for b, u, wire in batches
    ]
    await copy_rows(conn, "claims_history", rows, columns=_KEPT_COLUMNS, skip_existing=True)


Suffix = list[tuple[ClaimsBatchFormed, BatchUndo | None]]
"""A principal's kept batches after a point, in canonical order, each with its undo record
(``None`` for a batch kept before undo records were: it cannot be undone alone)."""


async def kept_after(
    conn: asyncpg.Connection, points: Mapping[PrincipalKey, bytes]
) -> dict[PrincipalKey, Suffix]:
    """Each principal's kept batches ordered after its point (an index range of the suffix,
    not the history)."""
    if not points:
        return {}
    ordered = sorted(points.items())
    rows = await conn.fetch(
        """
        SELECT h.tenant, h.principal, h.payload, h.undo FROM claims_history h
        JOIN unnest($1::text[], $2::text[], $3::bytea[]) AS k(tenant, principal, after)
          ON (h.tenant, h.principal) = (k.tenant, k.principal) AND h.order_key > k.after
        ORDER BY h.tenant, h.principal, h.order_key
        """,
        [t for (t, _), _ in ordered],
        [p for (_, p), _ in ordered],
        [after for _, after in ordered],
    )
    suffixes: dict[PrincipalKey, Suffix] = {who: [] for who in points}
    for r in rows:
        undo = None if r["undo"] is None else BatchUndo.from_json(bytes(r["undo"]))
        suffixes[(r["tenant"], r["principal"])].append(
            (decode_claims_batch(bytes(r["payload"])), undo)
        )
    return suffixes


async def undo_suffixes(
    conn: asyncpg.Connection,
    suffixes: Mapping[PrincipalKey, list[tuple[ClaimsBatchFormed, BatchUndo]]],
) -> None:
    """Put each principal's projected rows back as they were before its suffix: delete what
    the suffix's batches wrote (runs, evidence, refusals, corrections, the beliefs and entities
    they created, their kept rows) and give every older belief and entity the suffix changed
    its image from before the suffix's first change. Deletions the suffix made stay (their
    words are gone from every kept batch, so resolving again never forms them)."""
    batches = [b for suffix in suffixes.values() for b, _ in suffix]
    if not batches:
        return
    merged = undo_suffix(u for suffix in suffixes.values() for _, u in suffix)
    runs = sorted({b.batch_id for b in batches})
    scope = principal_columns(suffixes.keys())
    for table in ("evidence", "refusal", "belief_rejection"):
        await _delete(conn, table, "run_id", runs, scope)
    await _delete(conn, "belief", "belief_id", sorted(merged.beliefs_created), scope)
    # Older rows back to their images: after the suffix's beliefs are gone, so that a value the
    # suffix ended is current again beside nothing the one-current-value constraint forbids.
    await update_rows(
        conn, "entity", list(merged.aliases_before.values()), key="entity_id", columns=("aliases",)
    )
    await update_rows(
        conn,
        "belief",
        list(merged.beliefs_before.values()),
        key="belief_id",
        columns=MUTABLE_BELIEF_COLUMNS,
    )
    await _delete(conn, "entity", "entity_id", sorted(merged.entities_created), scope)
    await _delete(conn, "consolidation_run", "run_id", runs, scope)
    await _delete(conn, "claims_history", "run_id", runs, scope)


async def _delete(
    conn: asyncpg.Connection,
    table: str,
    column: str,
    ids: list[uuid.UUID],
    scope: tuple[list[str], list[str]],
) -> None:
    """Delete ``table``'s rows whose ``column`` is one of ``ids``, within the principals of
    ``scope`` (each of these columns is indexed, so the cost is the rows, not the table)."""
    if ids:
        await conn.execute(
            f"DELETE FROM {table} t USING unnest($1::text[], $2::text[]) AS k(tenant, principal) "
            f"WHERE (t.tenant, t.principal) = (k.tenant, k.principal) "
            f"AND t.{column} = ANY($3::uuid[])",
            *scope,
            ids,
        )
