"""Refusals a page at a time, filtered, and counted: by reason, and — for relations the
vocabulary does not have — by the relation that was proposed, which is what to add next.

Scoped by tenant and principal like every read; a refusal keeps its words (it is the principal's
own message), so the page shows them and the summary needs none.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

import asyncpg

from engram.projections.reads.keyset import keyset_page, scoped
from engram.projections.reads.runs import REFUSAL_COLUMNS, refusal_view
from engram.schemas.api import CountOf, RefusalPage, RefusalSummary

CURSOR_KIND = "refusals"


@dataclass(frozen=True)
class RefusalFilter:
    reason: str | None = None
    project: str | None = None
    relation: str | None = None
    since: datetime | None = None


def _condition(chosen: RefusalFilter, args: list[object]) -> str:
    filters = (
        ("reason =", chosen.reason),
        ("project =", chosen.project),
        ("relation =", chosen.relation),
        ("occurred_at >=", chosen.since),
    )
    return scoped(("tenant = $1", "principal = $2"), filters, args)


async def page_refusals(
    conn: asyncpg.Connection | asyncpg.Pool,
    *,
    tenant: str,
    principal: str,
    chosen: RefusalFilter,
    limit: int,
    cursor: str | None = None,
) -> RefusalPage:
    args: list[object] = [tenant, principal]
    items, next_cursor = await keyset_page(
        conn,
        kind=CURSOR_KIND,
        select=f"SELECT {REFUSAL_COLUMNS} FROM refusal",
        order=("occurred_at", "refusal_id"),
        condition=_condition(chosen, args),
        args=args,
        limit=limit,
        cursor=cursor,
        view=refusal_view,
        key=lambda refusal: (refusal.occurred_at, refusal.refusal_id),
    )
    return RefusalPage(items=items, next_cursor=next_cursor)


async def refusal_summary(
    conn: asyncpg.Connection | asyncpg.Pool,
    *,
    tenant: str,
    principal: str,
    chosen: RefusalFilter,
) -> RefusalSummary:
    """Counts under the same filters as the list (most frequent first, then by name)."""
    args: list[object] = [tenant, principal]
    condition = _condition(chosen, args)
    rows = await conn.fetch(
        "SELECT reason, CASE WHEN reason = 'unmapped_relation' THEN relation END AS unmapped, "
        f"count(*) AS n FROM refusal WHERE {condition} GROUP BY 1, 2",
        *args,
    )
    by_reason: dict[str, int] = {}
    by_relation: dict[str, int] = {}
    for row in rows:
        by_reason[row["reason"]] = by_reason.get(row["reason"], 0) + row["n"]
        if row["unmapped"] is not None:
            by_relation[row["unmapped"]] = row["n"]
    return RefusalSummary(
        total=sum(by_reason.values()),
        by_reason=_ranked(by_reason),
        by_unmapped_relation=_ranked(by_relation),
    )


def _ranked(counts: dict[str, int]) -> list[CountOf]:
    return [
        CountOf(key=key, count=n)
        for key, n in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))
    ]
