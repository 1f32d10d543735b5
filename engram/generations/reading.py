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

from engram.generations.registry import GenerationError

_CHOSEN = """
FROM generation
WHERE status <> 'dropped' AND CASE
    WHEN $1::text IS NOT NULL THEN generation_id = $1
    ELSE status = 'live'
      OR (status = 'serving' AND $3::text IS NOT NULL
          AND (tenant IS NULL OR tenant = $2)
          AND (cardinality(principals) = 0 OR $3 = ANY(principals)))
  END
ORDER BY status = 'serving' DESC, promoted_at DESC NULLS LAST
LIMIT 1
"""
"""The named generation; else, for a principal, the newest generation promoted for them; else
the live one."""
_RESOLVE = "SELECT schema_name" + _CHOSEN
_POLICY = "SELECT generation_id, policy_yaml" + _CHOSEN

Principal = tuple[str, str]
"""(tenant, principal) whose memory a reader reads."""


@asynccontextmanager
async def reading(
    db: asyncpg.Connection | asyncpg.Pool,
    generation: str | None = None,
    *,
    principal: Principal | None = None,
) -> AsyncIterator[asyncpg.Connection]:
    """A connection in a transaction that reads ``generation`` — by default the one serving
    ``principal`` if a generation was promoted for them, else the live one."""
    if isinstance(db, asyncpg.Pool):
        async with db.acquire() as conn, _in_generation(conn, generation, principal) as reader:
            yield reader
    else:
        async with _in_generation(db, generation, principal) as reader:
            yield reader


@asynccontextmanager
async def _in_generation(
    conn: asyncpg.Connection, generation: str | None, principal: Principal | None
) -> AsyncIterator[asyncpg.Connection]:
    tenant, person = principal if principal is not None else (None, None)
    async with conn.transaction(readonly=False):
        schema = await conn.fetchval(_RESOLVE, generation, tenant, person)
        if schema is None:
            raise GenerationError(
                f"no generation {generation}" if generation else "no live generation"
            )
        await conn.execute("SELECT set_config('search_path', $1, true)", f'"{schema}", public')
        yield conn


async def serving_policy(
    db: asyncpg.Connection | asyncpg.Pool, principal: Principal
) -> tuple[str, str | None]:
    """The generation that forms and serves ``principal``'s memory — the one :func:`reading`
    reads for them — and the policy file it forms under (None until a worker has pinned one)."""
    tenant, person = principal
    row = await db.fetchrow(_POLICY, None, tenant, person)
    if row is None:
        raise GenerationError("no live generation")
    return row["generation_id"], row["policy_yaml"]
