"""Beliefs a page at a time, filtered: the list the API, the CLI and the client page through.

Filters compose into one SQL condition (:func:`belief_condition`); the page is read by keyset
on (valid_from, belief_id), the order ``list_beliefs`` has always used, and only then joined to
its evidence, so a page reads ``limit`` beliefs however many the principal has.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

import asyncpg

from projections.cursor import decode_cursor, encode_cursor
from projections.queries import AS_OF, CURRENT, EVERYTHING, IN_PROJECT, belief_view
from schemas.api import BeliefPage

CONFIDENCE = "b.confidence"
"""The confidence ``min_confidence`` filters on: the stored one. Read-time decay changes this
expression and nothing else."""

CURSOR_KIND = "beliefs"


@dataclass(frozen=True)
class BeliefFilter:
    """Which beliefs: current by default; every status with ``include_all``; one ``status``;
    what was believed ``as_of`` a time; what applies in ``project``; and by type, relation
    and confidence."""

    include_all: bool = False
    as_of: datetime | None = None
    project: str | None = None
    status: str | None = None
    belief_type: str | None = None
    relation: str | None = None
    min_confidence: float | None = None


def belief_condition(chosen: BeliefFilter, args: list[object]) -> str:
    """The SQL condition for ``chosen`` over ``belief b``, appending its parameters to ``args``
    (which already holds those before it)."""

    def param(value: object) -> str:
        args.append(value)
        return f"${len(args)}"

    if chosen.as_of is not None:
        conditions = [AS_OF.replace("$3", param(chosen.as_of))]
    elif chosen.include_all or chosen.status is not None:
        conditions = [EVERYTHING]
    else:
        conditions = [CURRENT]
    if chosen.status is not None:
        conditions.append(f"b.status = {param(chosen.status)}")
    if chosen.project is not None:
        conditions.append(IN_PROJECT.format(scope=param(f"project:{chosen.project}")))
    if chosen.belief_type is not None:
        conditions.append(f"b.belief_type = {param(chosen.belief_type)}")
    if chosen.relation is not None:
        conditions.append(f"b.relation = {param(chosen.relation)}")
    if chosen.min_confidence is not None:
        conditions.append(f"{CONFIDENCE} >= {param(chosen.min_confidence)}")
    return " AND ".join(f"({c})" for c in conditions)


_PAGE = """
WITH page AS (
    SELECT b.* FROM belief b
    WHERE b.tenant = $1 AND b.principal = $2 AND {condition}
    ORDER BY b.valid_from, b.belief_id
    LIMIT {limit}
)
SELECT b.*, coalesce(se.canonical_name, b.subject_key) AS subject_name,
       coalesce(oe.canonical_name, b.object_text) AS object_name, ev.evidence_json
FROM page b
LEFT JOIN entity se ON se.entity_id = b.subject_entity_id
LEFT JOIN entity oe ON oe.entity_id = b.object_entity_id
CROSS JOIN LATERAL (
    SELECT coalesce(jsonb_agg(jsonb_build_object(
           'episode_id', e.episode_id, 'message_ordinal', e.message_ordinal, 'role', e.role,
           'quote', e.quote, 'span_start', e.span_start, 'span_end', e.span_end,
           'extractor', e.extractor, 'source_partition', e.source_partition,
           'source_offset', e.source_offset, 'occurred_at', e.occurred_at)
         ORDER BY e.occurred_at, e.source_offset, e.message_ordinal), '[]') AS evidence_json
    FROM evidence e WHERE e.belief_id = b.belief_id
) ev
ORDER BY b.valid_from, b.belief_id
"""


async def page_beliefs(
    conn: asyncpg.Connection | asyncpg.Pool,
    *,
    tenant: str,
    principal: str,
    chosen: BeliefFilter,
    limit: int,
    cursor: str | None = None,
) -> BeliefPage:
    """At most ``limit`` beliefs after ``cursor`` (from the start without one), in order."""
    args: list[object] = [tenant, principal]
    condition = belief_condition(chosen, args)
    if cursor is not None:
        at, key = decode_cursor(CURSOR_KIND, cursor)
        args += [at, key]
        condition += f" AND (b.valid_from, b.belief_id) > (${len(args) - 1}, ${len(args)})"
    rows = await conn.fetch(_PAGE.format(condition=condition, limit=int(limit) + 1), *args)
    items = [belief_view(row) for row in rows[:limit]]
    last = items[-1] if len(rows) > limit else None
    return BeliefPage(
        items=items,
        next_cursor=None
        if last is None
        else encode_cursor(CURSOR_KIND, last.valid_from, last.belief_id),
    )
