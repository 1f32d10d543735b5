"""A content digest of the projection: equal digests mean identical projected tables.

Used to check the two invariants that matter most — replaying the log reproduces the
projection, and a killed projector loses and duplicates nothing. Every projected column is
derived from the log, so the digest covers whole rows, in primary-key order.
"""

from __future__ import annotations

import hashlib

import asyncpg

PROJECTED_TABLES: tuple[tuple[str, str], ...] = (
    ("entity", "entity_id"),
    ("consolidation_run", "run_id"),
    ("belief", "belief_id"),
    ("evidence", "evidence_id"),
    ("refusal", "refusal_id"),
)


async def projection_digest(
    conn: asyncpg.Connection | asyncpg.Pool, *, tenant: str | None = None
) -> str:
    digest = hashlib.sha256()
    for table, key in PROJECTED_TABLES:
        where = "WHERE t.tenant = $1" if tenant is not None else "WHERE $1::text IS NULL"
        rows = await conn.fetch(
            f"SELECT row_to_json(t)::text AS row FROM {table} t {where} ORDER BY t.{key}", tenant
        )
        digest.update(table.encode())
        for row in rows:
            digest.update(row["row"].encode())
    return digest.hexdigest()
