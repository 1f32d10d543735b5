"""A session's diagnosis: what its episodes formed, what was refused and why, how many
attempts each took and what is parked — scoped to one principal, and never the messages.

The only words it shows are the evidence quotes of the principal's own beliefs; refusals are
reported by reason and relation (their words stay behind ``/v1/refusals``), and episodes by
their log position and backlog state. Episodes that never formed are found through the
backlog's principal hash and session (migration 0011); formed ones through their runs.
"""

from __future__ import annotations

import uuid
from typing import Any

import asyncpg
import orjson

from engram.projections.reads.runs import PROGRESS_COLUMNS, progress_of, run_counts
from engram.schemas.api import (
    CountOf,
    EpisodeDiagnosis,
    EvidenceView,
    FormedInSession,
    RefusalBrief,
    SessionDiagnosis,
)
from engram.schemas.common import principal_hash

_EPISODES = f"""
WITH runs AS (
    SELECT * FROM consolidation_run WHERE tenant = $1 AND principal = $2 AND session = $3
), unformed AS (
    SELECT * FROM formation_backlog bl
    WHERE bl.tenant = $1 AND bl.principal_hash = $4 AND bl.session = $3
      AND NOT EXISTS (SELECT 1 FROM runs r WHERE (r.source_topic, r.source_partition,
                      r.source_offset) = (bl.topic, bl.partition, bl."offset"))
)
SELECT r.episode_id, r.project, r.occurred_at, r.source_partition AS partition,
       r.source_offset AS "offset", r.run_id, r.policy_version, r.proposed, r.admitted,
       r.committed, r.reinforced, r.superseded, r.conflicted, r.refused, r.overflow,
       r.retracted, {PROGRESS_COLUMNS}
FROM runs r
LEFT JOIN formation_backlog bl ON (bl.topic, bl.partition, bl."offset")
                               = (r.source_topic, r.source_partition, r.source_offset)
UNION ALL
SELECT bl.episode_id, bl.project, bl.occurred_at, bl.partition, bl."offset", NULL, NULL, NULL,
       NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, {PROGRESS_COLUMNS}
FROM unformed bl
ORDER BY occurred_at, "offset", episode_id
"""

_FORMED = """
SELECT b.belief_id, b.statement, b.relation, b.status, b.confidence,
       jsonb_agg(jsonb_build_object(
           'episode_id', e.episode_id, 'message_ordinal', e.message_ordinal, 'role', e.role,
           'quote', e.quote, 'span_start', e.span_start, 'span_end', e.span_end,
           'extractor', e.extractor, 'source_partition', e.source_partition,
           'source_offset', e.source_offset, 'occurred_at', e.occurred_at)
         ORDER BY e.occurred_at, e.source_offset, e.message_ordinal) AS evidence_json
FROM evidence e JOIN belief b USING (belief_id)
WHERE (e.project, e.episode_id) IN (SELECT * FROM unnest($3::text[], $4::uuid[]))
  AND e.tenant = $1 AND e.principal = $2
  AND b.tenant = $1 AND b.principal = $2
GROUP BY b.belief_id
ORDER BY min(e.occurred_at), b.belief_id
"""


async def diagnose_session(
    conn: asyncpg.Connection | asyncpg.Pool, *, tenant: str, principal: str, session: str
) -> SessionDiagnosis | None:
    """None when the principal has no episode in that session (another's is not found)."""
    episodes = await conn.fetch(
        _EPISODES, tenant, principal, session, principal_hash(tenant, principal)
    )
    if not episodes:
        return None
    formed = await conn.fetch(
        _FORMED,
        tenant,
        principal,
        [e["project"] for e in episodes],
        [e["episode_id"] for e in episodes],
    )
    runs = [e["run_id"] for e in episodes if e["run_id"] is not None]
    refused = await conn.fetch(
        "SELECT refusal_id, episode_id, message_ordinal, role, relation, reason FROM refusal "
        "WHERE run_id = ANY($3::uuid[]) AND tenant = $1 AND principal = $2 "
        "ORDER BY occurred_at, episode_id, message_ordinal, refusal_id",
        tenant,
        principal,
        runs,
    )
    reasons: dict[str, int] = {}
    for row in refused:
        reasons[row["reason"]] = reasons.get(row["reason"], 0) + 1
    diagnosed = [_episode(row) for row in episodes]
    return SessionDiagnosis(
        session=session,
        episodes=diagnosed,
        formed=[_formed(row) for row in formed],
        refused=[RefusalBrief.model_validate(dict(row)) for row in refused],
        refused_by_reason=[
            CountOf(key=k, count=n)
            for k, n in sorted(reasons.items(), key=lambda kv: (-kv[1], kv[0]))
        ],
        parked=sum(e.progress is not None and e.progress.state == "parked" for e in diagnosed),
    )


def _episode(row: asyncpg.Record) -> EpisodeDiagnosis:
    run_id: uuid.UUID | None = row["run_id"]
    return EpisodeDiagnosis(
        episode_id=row["episode_id"],
        project=row["project"],
        occurred_at=row["occurred_at"],
        partition=row["partition"],
        offset=row["offset"],
        progress=progress_of(row),
        run_id=run_id,
        policy_version=row["policy_version"],
        counts=None if run_id is None else run_counts(row),
    )


def _formed(row: asyncpg.Record) -> FormedInSession:
    evidence: list[dict[str, Any]] = orjson.loads(row["evidence_json"])
    return FormedInSession(
        belief_id=row["belief_id"],
        statement=row["statement"],
        relation=row["relation"],
        status=row["status"],
        confidence=round(float(row["confidence"]), 4),
        evidence=[EvidenceView.model_validate(item) for item in evidence],
    )
