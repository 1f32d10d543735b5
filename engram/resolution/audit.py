"""The audit a batch leaves: its run row (what it proposed, committed, refused and why) and a
refusal row for each statement not believed — the core's refusals and resolution's rejections.

These are written for every batch applied, whatever it decided, so a person can always see why
a statement did not become a belief. Only the words of deleted content are left out.
"""

from __future__ import annotations

import uuid
from collections import Counter
from collections.abc import Sequence

import orjson

from engram.formation.core import candidate_refusal_id
from engram.resolution.beliefs import RefusalRow, RunRow
from engram.resolution.resolve import ConflictWithHistory, Create, Decision, Reinforce, Rejected
from engram.schemas.claims import ClaimsBatchFormed, Refusal, RefusalReason


def run_row(batch: ClaimsBatchFormed, decisions: Sequence[Decision]) -> RunRow:
    """The batch's ``consolidation_run`` row: the core's counts and what resolution decided."""
    reasons = Counter(r.reason.value for r in batch.refusals)
    committed = reinforced = superseded = conflicted = 0
    for d in decisions:  # one pass over the decisions for every count
        match d:
            case Reinforce():
                reinforced += 1
            case Create():
                committed += 1
                superseded += len(d.supersedes)
                conflicted += len(d.conflicts_with)
            case ConflictWithHistory():
                conflicted += 1
            case Rejected():
                reasons[d.reason.value] += 1
    return RunRow(
        run_id=batch.batch_id,
        tenant=batch.tenant,
        principal=batch.principal,
        project=batch.project,
        session=batch.session,
        episode_id=batch.episode_id,
        trigger=batch.trigger,
        scope=f"project:{batch.project}",
        policy_version=batch.policy_version,
        source_topic=batch.source.topic,
        source_partition=batch.source.partition,
        source_offset=batch.source.offset,
        occurred_at=batch.occurred_at,
        proposed=batch.counts.proposed,
        admitted=batch.counts.admitted,
        committed=committed,
        reinforced=reinforced,
        superseded=superseded,
        conflicted=conflicted,
        refused=batch.counts.refused,
        overflow=batch.counts.overflow,
        retracted=batch.counts.retracted,
        refusal_reasons=orjson.dumps(dict(sorted(reasons.items()))).decode(),
    )


def refusal_rows(batch: ClaimsBatchFormed, decisions: Sequence[Decision]) -> list[RefusalRow]:
    """The core's refusals and resolution's rejections, each id once (identical refusals of
    one message share an identity and are one row)."""
    rejected = [_refusal(d) for d in decisions if isinstance(d, Rejected)]
    rows: dict[uuid.UUID, RefusalRow] = {}
    for r in (*batch.refusals, *rejected) if rejected else batch.refusals:
        if r.refusal_id in rows:
            continue
        rows[r.refusal_id] = RefusalRow(
            refusal_id=r.refusal_id,
            run_id=batch.batch_id,
            tenant=batch.tenant,
            principal=batch.principal,
            project=batch.project,
            episode_id=batch.episode_id,
            message_ordinal=r.message_ordinal,
            role=r.role.value,
            relation=r.relation,
            statement=r.statement,
            quote=r.quote,
            reason=r.reason.value,
            detail=r.detail,
            extractor=r.extractor,
            policy_version=batch.policy_version,
            occurred_at=batch.occurred_at,
        )
    return list(rows.values())


def _refusal(rejected: Rejected) -> Refusal:
    """Resolution's rejection as the refusal it records (built from validated values)."""
    c = rejected.candidate
    statement, quote = _words(rejected)
    return Refusal.model_construct(
        refusal_id=candidate_refusal_id(c.candidate_id, rejected.reason),
        message_ordinal=c.message_ordinal,
        role=c.role,
        relation=c.relation,
        statement=statement,
        quote=quote,
        reason=rejected.reason,
        detail=rejected.detail,
        extractor=c.extractor,
    )


def _words(rejected: Rejected) -> tuple[str, str]:
    """A refusal keeps its words, except of content the principal deleted: none of those."""
    if rejected.reason is RefusalReason.TOMBSTONED:
        return "", ""
    return rejected.candidate.statement, rejected.candidate.quote
