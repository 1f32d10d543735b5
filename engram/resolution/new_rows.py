"""The rows a statement creates, built from its batch and candidate: a new belief and the
evidence that cites it.

Every value comes from the batch (event time, never the clock) and from name-based ids, so the
same statement builds the same rows in any replay. Deciding whether to create them is the
writer's (:mod:`engram.resolution.writer`); this only spells them out.
"""

from __future__ import annotations

import uuid

from engram.formation.corrections import ContentParts
from engram.resolution.beliefs import BeliefRow, EvidenceRow
from engram.resolution.confidence import real
from engram.resolution.naming import Names
from engram.resolution.resolve import Create, ended_state
from engram.schemas.claims import Candidate, ClaimsBatchFormed

EVIDENCE_NAMES = Names("evidence")


def belief_row(
    batch: ClaimsBatchFormed,
    decision: Create,
    parts: ContentParts,
    digest: str,
    entities: tuple[uuid.UUID | None, uuid.UUID | None],
) -> BeliefRow:
    """The belief ``decision`` creates; ``parts`` and ``digest``: its content key and hash;
    ``entities``: the entity ids of its subject and object (None for a literal end)."""
    c = decision.candidate
    subject_key, _, object_key, facet, polarity = parts
    return BeliefRow(
        belief_id=decision.belief_id,
        tenant=batch.tenant,
        principal=batch.principal,
        subject_kind=c.subject.kind.value,
        subject_entity_id=entities[0],
        subject_key=subject_key,
        relation=c.relation,
        object_kind=c.object.kind.value,
        object_entity_id=entities[1],
        object_text=c.object.text,
        object_key=object_key,
        facet=facet,
        content_hash=digest,
        statement=c.statement,
        belief_type=c.belief_type,
        polarity=polarity,
        authority=c.authority.value,
        portability=c.portability.value,
        sensitivity=list(c.sensitivity),
        is_single=c.cardinality == "single",
        valid_from=batch.occurred_at,
        # a state told in the past had ended by the time it was told; when it began is
        # not known, so its valid time is the instant it was told, closed
        valid_to=batch.occurred_at if ended_state(c) else None,
        known_from=batch.occurred_at,
        supersedes=decision.supersedes[0] if decision.supersedes else None,
        formation_run=batch.batch_id,
        policy_version=batch.policy_version,
        role=c.role.value,
        scope=c.scope,
        origin_scopes=[c.scope],
        confidence=real(c.confidence),
        status="provisional" if c.provisional else "active",
        corroboration=1,
        last_reinforced_at=batch.occurred_at,
        conflicts_with=list(decision.conflicts_with),
        flagged_for_review=c.flagged_for_review or bool(decision.conflicts_with),
    )


def evidence_row(
    batch: ClaimsBatchFormed, episode: str, c: Candidate, belief_id: uuid.UUID
) -> EvidenceRow:
    """The evidence that candidate ``c`` of ``batch`` gives ``belief_id``; ``episode``: the
    batch's episode id as ``name_uuid`` spells it (spelt once a batch, not once a row)."""
    return EvidenceRow(
        evidence_id=EVIDENCE_NAMES.name(belief_id, batch.project, episode, c.message_ordinal),
        belief_id=belief_id,
        tenant=batch.tenant,
        principal=batch.principal,
        project=batch.project,
        session=batch.session,
        episode_id=batch.episode_id,
        source_topic=batch.source.topic,
        source_partition=batch.source.partition,
        source_offset=batch.source.offset,
        message_ordinal=c.message_ordinal,
        role=c.role.value,
        quote=c.quote,
        span_start=c.span_start,
        span_end=c.span_end,
        extractor=c.extractor,
        run_id=batch.batch_id,
        occurred_at=batch.occurred_at,
    )
