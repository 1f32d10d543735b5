"""Writing claims batches: beliefs, evidence, entities, refusals, the run audit and the
consumed offset, in one PostgreSQL transaction per chunk of consecutive records.

The offset row is checked and advanced inside the same transaction as the rows the batches
produced, so a projector killed at any point either wrote all of a chunk and its offset or
none of it. The run's primary key (the batch id) makes a batch redelivered at another offset a
no-op as well.
"""

from __future__ import annotations

import uuid
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

import asyncpg
import orjson

from engram.shared.backlog import mark_formed
from formation.core import name_uuid
from formation.proposals import normalise_term
from formation.resolve import (
    ConflictWithHistory,
    Create,
    Decision,
    LiveBelief,
    Reinforce,
    Rejected,
    Replayed,
    applied,
    conflict_key,
    end_key,
    resolve,
)
from projections.memory_events import memory_events, record_in_outbox
from projections.outcome import BatchOutcome
from schemas.claims import Authority, Candidate, ClaimEnd, ClaimsBatchFormed, EndKind
from schemas.common import Polarity

PROJECTOR = "beliefs"
MAX_CONFIDENCE_BY_REINFORCEMENT = 0.95


@dataclass(frozen=True)
class ClaimsRecord:
    """One record of ``engram.claims``, decoded, with the position it was read from."""

    batch: ClaimsBatchFormed
    offset: int


async def project_records(
    conn: asyncpg.Connection,
    records: Sequence[ClaimsRecord],
    *,
    topic: str,
    partition: int,
    read_through: int,
) -> list[BatchOutcome]:
    """Apply consecutive records of one partition exactly once, in one transaction.

    The stored offset is locked and read once, records below it are skipped (already applied),
    and it moves past the last record in the same transaction as the rows, so a projector killed
    at any point wrote all of the chunk and its offset or none of it. One transaction per fetched
    chunk rather than per record: the offset row is written once, not once per batch.
    ``read_through`` is the last offset read, which may be past the last record given when
    undecodable records were left out.
    """
    outcomes: list[BatchOutcome] = []
    async with conn.transaction():
        next_offset = await conn.fetchval(
            "SELECT next_offset FROM projector_offset WHERE projector = $1 AND topic = $2 "
            "AND partition = $3 FOR UPDATE",
            PROJECTOR,
            topic,
            partition,
        )
        for record in records:
            if next_offset is not None and record.offset < next_offset:
                outcomes.append(BatchOutcome(skipped=True))
                continue
            outcomes.append(await _apply_once(conn, record.batch))
        if next_offset is None or read_through + 1 > next_offset:
            await conn.execute(
                "INSERT INTO projector_offset (projector, topic, partition, next_offset) "
                "VALUES ($1, $2, $3, $4) ON CONFLICT (projector, topic, partition) "
                "DO UPDATE SET next_offset = EXCLUDED.next_offset",
                PROJECTOR,
                topic,
                partition,
                read_through + 1,
            )
    return outcomes


async def _apply_once(conn: asyncpg.Connection, batch: ClaimsBatchFormed) -> BatchOutcome:
    """Apply a batch unless its run exists (the batch id is the run's key, so a batch
    redelivered at another offset is a no-op too), and mark its episode formed either way."""
    outcome = BatchOutcome()
    already = await conn.fetchval(
        "SELECT 1 FROM consolidation_run WHERE run_id = $1", batch.batch_id
    )
    if already is None:
        outcome = await _apply(conn, batch)
        await record_in_outbox(conn, memory_events(batch, outcome))
    else:
        outcome.skipped = True
    await mark_formed(
        conn,
        topic=batch.source.topic,
        partition=batch.source.partition,
        offset=batch.source.offset,
    )
    return outcome


async def stored_offsets(pool: asyncpg.Pool, topic: str) -> dict[int, int]:
    rows = await pool.fetch(
        "SELECT partition, next_offset FROM projector_offset WHERE projector = $1 AND topic = $2",
        PROJECTOR,
        topic,
    )
    return {row["partition"]: row["next_offset"] for row in rows}


async def _apply(conn: asyncpg.Connection, batch: ClaimsBatchFormed) -> BatchOutcome:
    live = await _load_live(conn, batch)
    decisions: list[Decision] = []
    for candidate in batch.candidates:
        decision = resolve(
            candidate,
            episode_id=batch.episode_id,
            occurred_at=batch.occurred_at,
            belief_id=name_uuid("belief", batch.tenant, batch.principal, candidate.candidate_id),
            live=live,
        )
        live = applied(decision, live, episode_id=batch.episode_id, occurred_at=batch.occurred_at)
        decisions.append(decision)
    outcome = BatchOutcome()
    await _insert_run(conn, batch, decisions)
    for decision in decisions:
        await _write_decision(conn, batch, decision, outcome)
    await _insert_refusals(conn, batch, decisions)
    return outcome


async def _load_live(conn: asyncpg.Connection, batch: ClaimsBatchFormed) -> list[LiveBelief]:
    """The current beliefs of the batch's conflict keys, and the past values of the same
    claims (superseded beliefs of other objects are never consulted, so never read)."""
    keys = {conflict_key(c) for c in batch.candidates}
    if not keys:
        return []
    subjects, relations, facets = (list(column) for column in zip(*sorted(keys), strict=True))
    objects = sorted({end_key(c.object) for c in batch.candidates})
    rows = await conn.fetch(
        """
        SELECT b.*, coalesce(array_agg(e.episode_id) FILTER (WHERE e.episode_id IS NOT NULL),
                             '{}') AS ev_episodes,
               coalesce(array_agg(e.message_ordinal) FILTER (WHERE e.episode_id IS NOT NULL),
                        '{}') AS ev_ordinals
        FROM belief b
        JOIN unnest($3::text[], $4::text[], $5::text[]) AS k(subject_key, relation, facet)
          ON (b.subject_key, b.relation, b.facet) = (k.subject_key, k.relation, k.facet)
        LEFT JOIN evidence e ON e.belief_id = b.belief_id AND e.episode_id = $6
        WHERE b.tenant = $1 AND b.principal = $2
          AND (b.status IN ('active', 'provisional')
               OR (b.status = 'superseded'
                   AND (b.object_key IS NULL OR b.object_key = ANY($7::text[]))))
        GROUP BY b.belief_id
        ORDER BY b.valid_from, b.belief_id
        """,
        batch.tenant,
        batch.principal,
        subjects,
        relations,
        facets,
        batch.episode_id,
        objects,
    )
    # Only this episode's evidence is loaded: resolution consults evidence to recognise a
    # same-source replay, and a belief's whole evidence list grows with every reinforcement.
    return [
        LiveBelief(
            belief_id=row["belief_id"],
            subject_key=row["subject_key"],
            relation=row["relation"],
            object_key=row["object_key"] or _object_key(row["object_kind"], row["object_text"]),
            facet=row["facet"],
            polarity=Polarity(row["polarity"]),
            authority=Authority(row["authority"]),
            valid_from=row["valid_from"],
            is_single=row["is_single"],
            portability=row["portability"],
            scope=row["scope"],
            origin_scopes=tuple(row["origin_scopes"]),
            evidence=frozenset(zip(row["ev_episodes"], row["ev_ordinals"], strict=True)),
            superseded=row["status"] == "superseded",
        )
        for row in rows
    ]


def _object_key(kind: str, text: str) -> str:
    return end_key(ClaimEnd(kind=EndKind(kind), text=text))


async def _insert_run(
    conn: asyncpg.Connection, batch: ClaimsBatchFormed, decisions: list[Decision]
) -> None:
    reasons = Counter(r.reason.value for r in batch.refusals)
    reasons.update(d.reason.value for d in decisions if isinstance(d, Rejected))
    creates = [d for d in decisions if isinstance(d, Create)]
    await conn.execute(
        """
        INSERT INTO consolidation_run (run_id, tenant, principal, project, session, episode_id,
            trigger, scope, policy_version, source_topic, source_partition, source_offset,
            occurred_at, proposed, admitted, committed, reinforced, superseded, conflicted,
            refused, overflow, retracted, refusal_reasons)
        VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17,
                $18, $19, $20, $21, $22, $23)
        """,
        batch.batch_id,
        batch.tenant,
        batch.principal,
        batch.project,
        batch.session,
        batch.episode_id,
        batch.trigger,
        f"project:{batch.project}",
        batch.policy_version,
        batch.source.topic,
        batch.source.partition,
        batch.source.offset,
        batch.occurred_at,
        batch.counts.proposed,
        batch.counts.admitted,
        len(creates),
        sum(isinstance(d, Reinforce) for d in decisions),
        sum(len(d.supersedes) for d in creates),
        sum(len(d.conflicts_with) for d in creates)
        + sum(isinstance(d, ConflictWithHistory) for d in decisions),
        batch.counts.refused,
        batch.counts.overflow,
        batch.counts.retracted,
        orjson.dumps(dict(sorted(reasons.items()))).decode(),
    )


async def _write_decision(
    conn: asyncpg.Connection, batch: ClaimsBatchFormed, decision: Decision, outcome: BatchOutcome
) -> None:
    match decision:
        case Create():
            await _create(conn, batch, decision, outcome)
        case Reinforce():
            await _reinforce(conn, batch, decision, outcome)
        case ConflictWithHistory():
            await _conflict_with_history(conn, batch, decision, outcome)
        case Replayed() | Rejected():
            pass


async def _entity(
    conn: asyncpg.Connection, batch: ClaimsBatchFormed, end: ClaimEnd
) -> uuid.UUID | None:
    """Resolve a named end by normalised name within the principal; first spelling wins."""
    if end.kind is not EndKind.ENTITY:
        return None
    normalized = normalise_term(end.text)
    entity_id = name_uuid("entity", batch.tenant, batch.principal, normalized)
    await conn.execute(
        """
        INSERT INTO entity (entity_id, tenant, principal, normalized_name, canonical_name)
        VALUES ($1, $2, $3, $4, $5)
        ON CONFLICT (tenant, principal, normalized_name) DO UPDATE
        SET aliases = CASE
            WHEN entity.canonical_name = $5 OR $5 = ANY(entity.aliases)
                 OR cardinality(entity.aliases) >= 16 THEN entity.aliases
            ELSE array_append(entity.aliases, $5) END
        """,
        entity_id,
        batch.tenant,
        batch.principal,
        normalized,
        end.text,
    )
    return entity_id


async def _create(
    conn: asyncpg.Connection, batch: ClaimsBatchFormed, decision: Create, outcome: BatchOutcome
) -> None:
    c, at = decision.candidate, batch.occurred_at
    for old in decision.supersedes:
        await conn.execute(
            "UPDATE belief SET status = 'superseded', valid_to = $2, known_to = $2, "
            "superseded_by = $3 WHERE belief_id = $1",
            old,
            at,
            decision.belief_id,
        )
        outcome.superseded.append(old)
    for other in decision.conflicts_with:
        await conn.execute(
            "UPDATE belief SET conflicts_with = array_append(conflicts_with, $2), "
            "flagged_for_review = true WHERE belief_id = $1",
            other,
            decision.belief_id,
        )
        outcome.conflicted.append(other)
    subject_entity = await _entity(conn, batch, c.subject)
    object_entity = await _entity(conn, batch, c.object)
    await conn.execute(
        """
        INSERT INTO belief (belief_id, tenant, principal, subject_kind, subject_entity_id,
            subject_key, relation, object_kind, object_entity_id, object_text, facet, statement,
            belief_type, polarity, authority, scope, origin_scopes, portability, sensitivity,
            confidence, status, is_single, corroboration, last_reinforced_at, valid_from,
            known_from, supersedes, conflicts_with, flagged_for_review, formation_run,
            policy_version, role, object_key)
        VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17,
                $18, $19, $20, $21, $22, 1, $23, $23, $23, $24, $25, $26, $27, $28, $29, $30)
        """,
        decision.belief_id,
        batch.tenant,
        batch.principal,
        c.subject.kind.value,
        subject_entity,
        end_key(c.subject),
        c.relation,
        c.object.kind.value,
        object_entity,
        c.object.text,
        c.facet or "",
        c.statement,
        c.belief_type,
        c.polarity.value,
        c.authority.value,
        c.scope,
        [c.scope],
        c.portability.value,
        c.sensitivity,
        c.confidence,
        "provisional" if c.provisional else "active",
        c.cardinality == "single",
        at,
        decision.supersedes[0] if decision.supersedes else None,
        list(decision.conflicts_with),
        c.flagged_for_review or bool(decision.conflicts_with),
        batch.batch_id,
        batch.policy_version,
        c.role.value,
        end_key(c.object),
    )
    await _evidence(conn, batch, c, decision.belief_id)
    outcome.created.append(decision.belief_id)


async def _reinforce(
    conn: asyncpg.Connection, batch: ClaimsBatchFormed, decision: Reinforce, outcome: BatchOutcome
) -> None:
    await conn.execute(
        """
        UPDATE belief SET corroboration = corroboration + 1,
            confidence = least($2::real, confidence + 0.05),
            last_reinforced_at = greatest(last_reinforced_at, $3),
            origin_scopes = $4,
            scope = CASE WHEN $5 THEN 'user' ELSE scope END,
            status = CASE WHEN status = 'provisional' THEN 'active' ELSE status END
        WHERE belief_id = $1
        """,
        decision.belief_id,
        MAX_CONFIDENCE_BY_REINFORCEMENT,
        batch.occurred_at,
        list(decision.origin_scopes),
        decision.promote_to_user_scope,
    )
    await _evidence(conn, batch, decision.candidate, decision.belief_id)
    outcome.reinforced.append(decision.belief_id)
    if decision.promote_to_user_scope:
        outcome.promoted.append(decision.belief_id)


async def _conflict_with_history(
    conn: asyncpg.Connection,
    batch: ClaimsBatchFormed,
    decision: ConflictWithHistory,
    outcome: BatchOutcome,
) -> None:
    """Link the past value and the value that replaced it, both ways, and flag both; the past
    value gains the new evidence but stays superseded (no reversion, no invented interval)."""
    past, current = decision.past_belief_id, decision.current_belief_id
    for belief, other in ((past, current), (current, past)):
        await conn.execute(
            "UPDATE belief SET flagged_for_review = true, conflicts_with = CASE "
            "WHEN $2 = ANY(conflicts_with) THEN conflicts_with "
            "ELSE array_append(conflicts_with, $2) END WHERE belief_id = $1",
            belief,
            other,
        )
    await _evidence(conn, batch, decision.candidate, past)
    outcome.conflicted.append(current)


async def _evidence(
    conn: asyncpg.Connection, batch: ClaimsBatchFormed, c: Candidate, belief_id: uuid.UUID
) -> None:
    await conn.execute(
        """
        INSERT INTO evidence (evidence_id, belief_id, tenant, principal, project, session,
            episode_id, source_topic, source_partition, source_offset, message_ordinal, role,
            quote, span_start, span_end, extractor, run_id, occurred_at)
        VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18)
        ON CONFLICT (belief_id, episode_id, message_ordinal) DO NOTHING
        """,
        name_uuid("evidence", belief_id, batch.episode_id, c.message_ordinal),
        belief_id,
        batch.tenant,
        batch.principal,
        batch.project,
        batch.session,
        batch.episode_id,
        batch.source.topic,
        batch.source.partition,
        batch.source.offset,
        c.message_ordinal,
        c.role.value,
        c.quote,
        c.span_start,
        c.span_end,
        c.extractor,
        batch.batch_id,
        batch.occurred_at,
    )


async def _insert_refusals(
    conn: asyncpg.Connection, batch: ClaimsBatchFormed, decisions: list[Decision]
) -> None:
    rows = [
        (
            r.refusal_id,
            r.message_ordinal,
            r.role.value,
            r.relation,
            r.statement,
            r.quote,
            r.reason.value,
            r.detail,
            r.extractor,
        )
        for r in batch.refusals
    ]
    rows += [
        (
            name_uuid("refusal", d.candidate.candidate_id, d.reason),
            d.candidate.message_ordinal,
            d.candidate.role.value,
            d.candidate.relation,
            d.candidate.statement,
            d.candidate.quote,
            d.reason.value,
            d.detail,
            d.candidate.extractor,
        )
        for d in decisions
        if isinstance(d, Rejected)
    ]
    if not rows:
        return
    await conn.executemany(
        """
        INSERT INTO refusal (refusal_id, run_id, tenant, principal, project, episode_id,
            message_ordinal, role, relation, statement, quote, reason, detail, extractor,
            policy_version, occurred_at)
        VALUES ($1, $10, $11, $12, $13, $14, $2, $3, $4, $5, $6, $7, $8, $9, $15, $16)
        ON CONFLICT (refusal_id) DO NOTHING
        """,
        [
            (
                *row,
                batch.batch_id,
                batch.tenant,
                batch.principal,
                batch.project,
                batch.episode_id,
                batch.policy_version,
                batch.occurred_at,
            )
            for row in rows
        ],
    )
