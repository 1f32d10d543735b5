"""A principal's transaction lock: what keeps two writers of one principal's rows in turn.

The belief projector takes it for every principal of a chunk, and the message indexer for every
principal of the records it indexes, so a deletion the projector applies and a message the
indexer writes never pass each other: whichever commits second sees the other's rows.
"""

from __future__ import annotations

from collections.abc import Collection

import asyncpg

from engram.resolution.ordering import PrincipalKey

PRINCIPAL_LOCK = "hashtextextended(current_schema() || '/' || {tenant} || '/' || {principal}, 0)"
"""The key of a principal's transaction lock, an expression over two text values: keyed by the
schema written as well, so a generation's projection does not wait for the live one's."""


def principal_columns(principals: Collection[PrincipalKey]) -> tuple[list[str], list[str]]:
    """Tenants and principals, sorted, as two parallel arrays for ``unnest``."""
    ordered = sorted(principals)
    return [t for t, _ in ordered], [p for _, p in ordered]


LOCK_PRINCIPALS = f"""
SELECT count(pg_advisory_xact_lock(s.lock)) FROM (
    SELECT DISTINCT {PRINCIPAL_LOCK.format(tenant="k.tenant", principal="k.principal")} AS lock
    FROM unnest($1::text[], $2::text[]) AS k(tenant, principal)
    ORDER BY lock
) s
"""
"""Take the transaction-scoped lock of every principal of a chunk, in ascending order (two
chunks naming the same principals never wait for each other in a cycle). Held to the commit:
a projector that has lost its partitions but not yet noticed, and the one that has them now,
apply a principal's batches one transaction after the other, the second finding the first's
runs there. Within one projector lanes never share a principal (:mod:`engram.projections.beliefs.lanes`),
so there it is waited for only when a principal's batches sit in two partitions."""


async def lock_principals(conn: asyncpg.Connection, principals: Collection[PrincipalKey]) -> None:
    """Take :data:`LOCK_PRINCIPALS` for ``principals`` (inside a transaction)."""
    await conn.execute(LOCK_PRINCIPALS, *principal_columns(principals))
