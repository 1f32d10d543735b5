"""Beliefs a page at a time, filtered: the list the API, the CLI and the client page through.

Filters compose into one SQL condition (:func:`belief_condition`); the page is read by keyset
on (valid_from, belief_id), the order ``list_beliefs`` has always used, and only then joined to
its evidence, so a page reads ``limit`` beliefs however many the principal has.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime

import asyncpg

from engram.projections.reads.cursor import decode_cursor, encode_cursor
from engram.projections.reads.decay_in_force import decay_in_force
from engram.projections.reads.queries import AS_OF, CURRENT, EVERYTHING, IN_PROJECT, belief_view
from engram.resolution.decay import Decay
from engram.schemas.api import BeliefPage

_EFFECTIVE = """CASE
    WHEN {expiry} IS NOT NULL AND {age} >= {expiry} THEN 0
    WHEN {half_life} IS NULL OR round(b.confidence::numeric, 4) <= {floor}
        THEN round(b.confidence::numeric, 4)
    ELSE greatest(
        round((round(b.confidence::numeric, 4)
               * power(0.5, least({age} / {half_life}, {halvings})))::numeric, 4),
        {floor})
END"""

HALVINGS_THAT_ROUND_TO_ZERO = 64
"""The decay's exponent is capped here: PostgreSQL raises ``value out of range: underflow``
where ``power(0.5, x)`` falls below what a float8 holds (x above ~1,074: a belief read
centuries after it was last reinforced, as a far ``as_of`` asks — the API answered 500). Any
x above ~14.3 already rounds to 0.0000 at four places for a confidence of at most 1, so the cap
changes no answer; Python's ``0.5 ** x`` gives 0.0 there, and the two still agree."""


def effective_confidence(decay: Decay, now: datetime, param: Callable[[object], str]) -> str:
    """The SQL twin of :meth:`resolution.decay.Decay.effective` over ``belief b``: the stored
    confidence decayed to ``now`` by the read generation's policy, so ``min_confidence`` is
    decided in the query and a page holds ``limit`` beliefs that pass it (a filter after the
    query would leave pages short). ``tests/integration/test_decay_sql.py`` holds the two to
    the same answers."""
    half_life_types = param(list(decay.half_lives_days))
    half_life_days = param([float(d) for d in decay.half_lives_days.values()])
    transient_relations = param(list(decay.transient_days))
    transient_days = param([float(d) for d in decay.transient_days.values()])
    age = (
        f"greatest(extract(epoch FROM ({param(now)}::timestamptz - b.last_reinforced_at))"
        " / 86400.0, 0)::float8"
    )
    return _EFFECTIVE.format(
        age=age,
        expiry=f"({transient_days}::float8[])[array_position({transient_relations}::text[],"
        " b.relation)]",
        half_life=f"({half_life_days}::float8[])[array_position({half_life_types}::text[],"
        " b.belief_type)]",
        floor=f"{param(decay.floor)}::numeric",
        halvings=HALVINGS_THAT_ROUND_TO_ZERO,
    )


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


def belief_condition(chosen: BeliefFilter, args: list[object], decay: Decay, now: datetime) -> str:
    """The SQL condition for ``chosen`` over ``belief b``, appending its parameters to ``args``
    (which already holds those before it); ``min_confidence`` is on the confidence decayed
    to ``now`` by ``decay``."""

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
        effective = effective_confidence(decay, now, param)
        conditions.append(f"{effective} >= {param(chosen.min_confidence)}::numeric")
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
    decay, now = await decay_in_force(conn), chosen.as_of or datetime.now(UTC)
    args: list[object] = [tenant, principal]
    condition = belief_condition(chosen, args, decay, now)
    if cursor is not None:
        at, key = decode_cursor(CURSOR_KIND, cursor)
        args += [at, key]
        condition += f" AND (b.valid_from, b.belief_id) > (${len(args) - 1}, ${len(args)})"
    rows = await conn.fetch(_PAGE.format(condition=condition, limit=int(limit) + 1), *args)
    items = [belief_view(row, decay, now) for row in rows[:limit]]
    last = items[-1] if len(rows) > limit else None
    return BeliefPage(
        items=items,
        next_cursor=None
        if last is None
        else encode_cursor(CURSOR_KIND, last.valid_from, last.belief_id),
    )
