"""A content digest of the projection: equal digests mean identical projected tables.

Used to check the two invariants that matter most — replaying the log reproduces the
projection, and a killed projector loses and duplicates nothing. Every projected column is
derived from the log, so the digest covers whole rows, in primary-key order.
"""

from __future__ import annotations

import hashlib

import asyncpg

from engram.projections.beliefs.integrity import check_links

PROJECTED_TABLES: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("entity", ("entity_id",)),
    ("consolidation_run", ("run_id",)),
    ("belief", ("belief_id",)),
    ("evidence", ("evidence_id",)),
    ("refusal", ("refusal_id",)),
    ("belief_rejection", ("rejection_id",)),
    # Its whole primary key: two principals can delete the same content (same hash), and
    # ordering by the hash alone left their order to the table's physical layout.
    ("belief_tombstone", ("tenant", "principal", "content_hash")),
)


PROJECTION_STATE: tuple[str, ...] = (
    *(table for table, _ in PROJECTED_TABLES),
    "principal_tombstone",
    "claims_history",
    "memory_event_outbox",
    "memory_event_pending",
    "projector_offset",
    "message",
    "message_hidden",
    "message_term",
    "message_term_stats",
    "message_scope_stats",
    "erasure_receipt",
    "erasure_part",
)
"""Everything a replay of the log rebuilds: the projected tables, the outbox, the index of
messages (its BM25 statistics, and what it must leave out), the receipts of erasures and the
stored offsets that say how far each has got. The receipts are not in the digest: what they
count of messages and vectors depends on how far the indexer and the embedder had got."""


async def drop_projections(conn: asyncpg.Connection, *, backlog: bool = False) -> None:
    """Empty the projection (and with ``backlog``, formation's bookkeeping) so that a replay of
    the log rebuilds it from nothing: the one list of what that means."""
    tables = (*PROJECTION_STATE, *(("formation_backlog",) if backlog else ()))
    await conn.execute(f"TRUNCATE {', '.join(tables)}")


async def projection_digest(
    conn: asyncpg.Connection | asyncpg.Pool, *, tenant: str | None = None
) -> str:
    """The digest of the projection (or of ``tenant``'s rows); :class:`engram.projections.beliefs.integrity.
    BrokenLinksError` instead when a row cites one that is not there — two projections that
    both dangle the same way are not a determinism result worth reporting."""
    await check_links(conn, tenant=tenant)
    digest = hashlib.sha256()
    for table, key in PROJECTED_TABLES:
        order = ", ".join(f"t.{column}" for column in key)
        where = "WHERE t.tenant = $1" if tenant is not None else "WHERE $1::text IS NULL"
        rows = await conn.fetch(
            f"SELECT row_to_json(t)::text AS row FROM {table} t {where} ORDER BY {order}", tenant
        )
        digest.update(table.encode())
        for row in rows:
            digest.update(row["row"].encode())
    return digest.hexdigest()
