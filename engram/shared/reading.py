"""Reading one generation: the live one unless a reader names another, never a mix.

Every read runs in a transaction that first resolves the generation's schema from the registry
and then sets ``search_path`` for that transaction only (``SET LOCAL``). Promotion flips the
live row in one transaction, so a reader's transaction resolves either the generation before
it or the one after it, and every statement it runs reads that one. The queries themselves
keep their unqualified table names: this is the one place that decides where they read.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import asyncpg

from engram.shared.generations import GenerationError

_RESOLVE = (
    "SELECT schema_name FROM generation WHERE status <> 'dropped' AND "
    "CASE WHEN $1::text IS NULL THEN status = 'live' ELSE generation_id = $1 END"
)


@asynccontextmanager
async def reading(
    db: asyncpg.Connection | asyncpg.Pool, generation: str | None = None
) -> AsyncIterator[asyncpg.Connection]:
    """A connection in a transaction that reads ``generation`` (default: the live one)."""
    if isinstance(db, asyncpg.Pool):
        async with db.acquire() as conn, _in_generation(conn, generation) as reader:
            yield reader
    else:
        async with _in_generation(db, generation) as reader:
            yield reader


@asynccontextmanager
async def _in_generation(
    conn: asyncpg.Connection, generation: str | None
) -> AsyncIterator[asyncpg.Connection]:
    async with conn.transaction(readonly=False):
        schema = await conn.fetchval(_RESOLVE, generation)
        if schema is None:
            raise GenerationError(
                f"no generation {generation}" if generation else "no live generation"
            )
        await conn.execute("SELECT set_config('search_path', $1, true)", f'"{schema}", public')
        yield conn
