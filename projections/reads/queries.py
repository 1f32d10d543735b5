"""Reading beliefs back: always scoped by tenant and principal, current or as of a time."""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import asyncpg
import orjson

from engram.formation.wording import Person, kept_as_history, readable_statement
from engram.projections.reads.decay_in_force import decay_in_force
from engram.projections.reads.runs import REFUSAL_COLUMNS, get_run, refusal_view
from engram.resolution.decay import Decay
from engram.schemas.api import BeliefDetail, BeliefView, CorrectionView, EvidenceView, RefusalView
from engram.schemas.corrections import ContentKey

__all__ = [
    "BeliefContent",
    "BeliefDetail",
    "BeliefView",
    "CorrectionView",
    "EvidenceView",
    "RefusalView",
    "belief_content",
    "belief_view",
    "get_belief",
    "list_beliefs",
    "list_refusals",
]


_SELECT = """
SELECT b.*, coalesce(se.canonical_name, b.subject_key) AS subject_name,
       coalesce(oe.canonical_name, b.object_text) AS object_name,
       coalesce(jsonb_agg(jsonb_build_object(
           'episode_id', e.episode_id, 'message_ordinal', e.message_ordinal, 'role', e.role,
           'quote', e.quote, 'span_start', e.span_start, 'span_end', e.span_end,
           'extractor', e.extractor, 'source_partition', e.source_partition,
           'source_offset', e.source_offset, 'occurred_at', e.occurred_at)
         ORDER BY e.occurred_at, e.source_offset, e.message_ordinal)
         FILTER (WHERE e.evidence_id IS NOT NULL), '[]') AS evidence_json
FROM belief b
LEFT JOIN entity se ON se.entity_id = b.subject_entity_id
LEFT JOIN entity oe ON oe.entity_id = b.object_entity_id
LEFT JOIN evidence e ON e.belief_id = b.belief_id
WHERE b.tenant = $1 AND b.principal = $2 AND {condition}
GROUP BY b.belief_id, se.canonical_name, oe.canonical_name
ORDER BY b.valid_from, b.belief_id
"""

CURRENT = "b.status IN ('active', 'provisional')"
EVERYTHING = "true"
AS_OF = (
    "b.valid_from <= $3 AND (b.valid_to IS NULL OR b.valid_to > $3) "
    "AND b.known_from <= $3 AND (b.known_to IS NULL OR b.known_to > $3)"
)


def _subject(row: asyncpg.Record) -> str:
    """How a reader sees the subject: "speaker", the project's id, or the entity's first
    spelling."""
    match row["subject_kind"]:
        case "speaker":
            return "speaker"
        case "project":
            return str(row["subject_key"]).removeprefix("project:")
        case _:
            return str(row["subject_name"])


def belief_view(row: asyncpg.Record, decay: Decay, now: datetime) -> BeliefView:
    """A belief row (``b.*`` with subject and object names and its evidence as JSON) as the
    API shows it."""
    evidence: list[dict[str, Any]] = orjson.loads(row["evidence_json"])
    subject = _subject(row)
    confidence = round(float(row["confidence"]), 4)
    effective = decay.effective(
        confidence,
        belief_type=row["belief_type"],
        relation=row["relation"],
        last_reinforced_at=row["last_reinforced_at"],
        now=now,
    )
    return BeliefView(
        belief_id=row["belief_id"],
        statement=row["statement"],
        readable=readable_statement(
            subject=subject,
            subject_is_principal=row["subject_kind"] == "speaker",
            relation=row["relation"],
            obj=row["object_name"],
            facet=row["facet"] or None,
            retracted=row["polarity"] == "retract",
            person=Person(row["principal"]),
            ended=kept_as_history(row["status"], row["valid_to"]),
        ),
        subject=subject,
        relation=row["relation"],
        object=row["object_name"],
        facet=row["facet"] or None,
        belief_type=row["belief_type"],
        polarity=row["polarity"],
        authority=row["authority"],
        scope=row["scope"],
        origin_scopes=list(row["origin_scopes"]),
        portability=row["portability"],
        sensitivity=list(row["sensitivity"]),
        confidence=confidence,
        effective_confidence=effective,
        last_reinforced_at=row["last_reinforced_at"],
        status=row["status"],
        corroboration=row["corroboration"],
        valid_from=row["valid_from"],
        valid_to=row["valid_to"],
        known_from=row["known_from"],
        known_to=row["known_to"],
        superseded_by=row["superseded_by"],
        conflicts_with=list(row["conflicts_with"]),
        flagged_for_review=row["flagged_for_review"],
        excluded_scopes=list(row["excluded_scopes"]),
        policy_version=row["policy_version"],
        content_hash=row["content_hash"],
        evidence=[EvidenceView.model_validate(item) for item in evidence],
    )


IN_PROJECT = (
    "NOT ({scope} = ANY(b.excluded_scopes)) "
    "AND (b.portability <> 'local' OR b.scope = {scope} OR {scope} = ANY(b.origin_scopes))"
)
"""What applies in one project: not excluded there by a ``not_here`` correction, and local
beliefs only where they were learned."""


async def list_beliefs(
    conn: asyncpg.Connection | asyncpg.Pool,
    *,
    tenant: str,
    principal: str,
    include_all: bool = False,
    as_of: datetime | None = None,
    project: str | None = None,
) -> list[BeliefView]:
    """Current beliefs; or every belief with its status (``include_all``); or what was
    believed at ``as_of`` (valid and known at that time); with ``project``, only what applies
    in that project. Every belief at once: the API and the CLI page through
    :func:`engram.projections.reads.pages.page_beliefs` instead."""
    args: list[object] = [tenant, principal]
    if as_of is not None:
        args.append(as_of)
        condition = AS_OF
    else:
        condition = EVERYTHING if include_all else CURRENT
    if project is not None:
        args.append(f"project:{project}")
        condition = f"({condition}) AND " + IN_PROJECT.format(scope=f"${len(args)}")
    rows = await conn.fetch(_SELECT.format(condition=condition), *args)
    decay, moment = await decay_in_force(conn), as_of or datetime.now(UTC)
    return [belief_view(row, decay, moment) for row in rows]


_LINKED = """
WITH RECURSIVE chain(belief_id, step, way) AS (
    SELECT $3::uuid, 0, 0
    UNION
    SELECT link.belief_id, c.step + 1, link.way FROM chain c
    JOIN belief l ON l.belief_id = c.belief_id AND l.tenant = $1 AND l.principal = $2
    CROSS JOIN LATERAL (VALUES (l.supersedes, -1), (l.superseded_by, 1)) AS link(belief_id, way)
    WHERE link.belief_id IS NOT NULL AND c.step < $5 AND c.way IN (0, link.way)
), linked AS (
    SELECT belief_id FROM chain
    UNION
    SELECT belief_id FROM belief WHERE tenant = $1 AND principal = $2 AND content_hash = $4
)
SELECT coalesce(array_agg(belief_id) FILTER (WHERE belief_id <> $3), '{}') AS ids,
       EXISTS (SELECT 1 FROM chain WHERE step = $5) AS cut
FROM linked
"""
"""The beliefs linked to ``$3``: its supersession chain up to ``$5`` steps each way (what it
replaced, what replaced that, …, and what replaced it, …) and every belief of the same content —
found by key, each step an index lookup, before any of them is read whole; ``cut`` when the
chain went on past the steps taken."""

HISTORY_STEPS = 10
"""How far the detail follows a supersession chain each way: a value that changed a hundred
times shows its ten neighbours each side (``history_truncated``); the rest is a list away
(``/v1/beliefs?relation=…&all=true``)."""


async def get_belief(
    conn: asyncpg.Connection | asyncpg.Pool, *, tenant: str, principal: str, belief_id: uuid.UUID
) -> BeliefDetail | None:
    """One belief of this principal, or None: another principal's belief is not found."""
    rows = await conn.fetch(
        _SELECT.format(condition="b.belief_id = $3"), tenant, principal, belief_id
    )
    if not rows:
        return None
    decay, now = await decay_in_force(conn), datetime.now(UTC)
    belief = belief_view(rows[0], decay, now)
    found = await conn.fetchrow(
        _LINKED, tenant, principal, belief_id, belief.content_hash, HISTORY_STEPS
    )
    assert found is not None
    linked = await conn.fetch(
        _SELECT.format(condition="b.belief_id = ANY($3::uuid[])"), tenant, principal, found["ids"]
    )
    corrections = await conn.fetch(
        "SELECT kind, scope, statement, replacement, belief_id, correcting_event, occurred_at "
        "FROM belief_rejection WHERE tenant = $1 AND principal = $2 AND content_hash = $3 "
        "ORDER BY occurred_at, rejection_id",
        tenant,
        principal,
        belief.content_hash,
    )
    return BeliefDetail(
        belief=belief,
        history=[belief_view(row, decay, now) for row in linked],
        history_truncated=found["cut"],
        corrections=[CorrectionView.model_validate(dict(row)) for row in corrections],
        formed_by=await get_run(
            conn, tenant=tenant, principal=principal, run_id=rows[0]["formation_run"]
        ),
    )


async def list_refusals(
    conn: asyncpg.Connection | asyncpg.Pool, *, tenant: str, principal: str, limit: int = 200
) -> list[RefusalView]:
    rows = await conn.fetch(
        f"SELECT {REFUSAL_COLUMNS} FROM refusal "
        "WHERE tenant = $1 AND principal = $2 ORDER BY occurred_at, episode_id, message_ordinal, "
        "refusal_id LIMIT $3",
        tenant,
        principal,
        limit,
    )
    return [refusal_view(row) for row in rows]


@dataclass(frozen=True)
class BeliefContent:
    """What a correction names a belief by: its content key and hash, its statement and the
    scopes it belongs to (its own, then where it was learned)."""

    content: ContentKey
    content_hash: str | None
    statement: str
    scopes: list[str]


async def belief_content(
    conn: asyncpg.Connection | asyncpg.Pool, *, tenant: str, principal: str, belief_id: uuid.UUID
) -> BeliefContent | None:
    """None when this principal has no such belief."""
    row = await conn.fetchrow(
        "SELECT subject_key, relation, object_key, facet, polarity, content_hash, statement, "
        "scope, origin_scopes FROM belief "
        "WHERE tenant = $1 AND principal = $2 AND belief_id = $3",
        tenant,
        principal,
        belief_id,
    )
    if row is None:
        return None
    key = ContentKey(
        subject_key=row["subject_key"],
        relation=row["relation"],
        object_key=row["object_key"] or "-",
        facet=row["facet"],
        polarity=row["polarity"],
    )
    return BeliefContent(
        key, row["content_hash"], row["statement"], [row["scope"], *row["origin_scopes"]]
    )
