"""Creating a generation's schema: every per-generation table, shaped like the live ones.

``CREATE TABLE s.t (LIKE public.t INCLUDING ALL)`` copies columns, defaults, CHECK and
exclusion constraints (one current value per principal, subject and facet) and indexes, so
whatever held for the live projection holds for the shadow one. Foreign keys are not copied
by LIKE: inside a generation the projector is the only writer and resolves the rows it links,
and the vocabulary table ``relation`` stays shared in ``public``. A ``bigserial`` column's
default would still draw from ``public``'s sequence; each copy gets a sequence of its own so a
generation's outbox numbers do not interleave with the live one's.
"""

from __future__ import annotations

import asyncpg

GENERATION_TABLES: tuple[str, ...] = (
    "entity",
    "consolidation_run",
    "belief",
    "evidence",
    "refusal",
    "belief_rejection",
    "belief_tombstone",
    "principal_tombstone",
    "memory_event_outbox",
    "memory_event_pending",
    "projector_offset",
    "formation_backlog",
    "formation_audit",
    "claims_history",
    "message",
    "message_hidden",
    "message_term",
    "message_term_stats",
    "message_scope_stats",
    "erasure_receipt",
    "erasure_part",
)
"""Everything formation and projection write; ``relation`` (the vocabulary) and the registry
stay shared."""

_SERIAL_COLUMNS = """
SELECT table_name, column_name FROM information_schema.columns
WHERE table_schema = $1 AND column_default LIKE 'nextval(%'
ORDER BY table_name, column_name
"""


async def create_generation_schema(conn: asyncpg.Connection, schema: str) -> None:
    """Create ``schema`` and its tables if missing (idempotent: a resumed run calls it again)."""
    async with conn.transaction():
        await conn.execute(f'CREATE SCHEMA IF NOT EXISTS "{schema}"')
        for table in GENERATION_TABLES:
            await conn.execute(
                f'CREATE TABLE IF NOT EXISTS "{schema}".{table} (LIKE public.{table} INCLUDING ALL)'
            )
        for row in await conn.fetch(_SERIAL_COLUMNS, schema):
            await _own_sequence(conn, schema, row["table_name"], row["column_name"])


async def _own_sequence(conn: asyncpg.Connection, schema: str, table: str, column: str) -> None:
    sequence = f'"{schema}".{table}_{column}_seq'
    await conn.execute(
        f'CREATE SEQUENCE IF NOT EXISTS {sequence} OWNED BY "{schema}".{table}."{column}"'
    )
    await conn.execute(
        f'ALTER TABLE "{schema}".{table} ALTER COLUMN "{column}" '
        f"SET DEFAULT nextval('{schema}.{table}_{column}_seq')"
    )
