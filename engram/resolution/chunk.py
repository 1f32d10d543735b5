"""Resolving a chunk of claims batches into row changes: the whole rule, decided in memory.

For each batch, in log order: skip it if its run exists (a redelivered batch is a no-op), else
decide each candidate (:func:`.resolve.resolve`) against the state the earlier candidates and
batches left, and turn the decision into rows — a new belief with its entities and evidence, a
reinforcement (corroboration, confidence, provisional → active after the policy's number of
independent corroborations, promotion to user scope), a
supersession, a conflict link, a refusal. The store writes the result with one statement per
table and decides nothing. Every value comes from the batches and the loaded rows (event time,
never the clock), so a replay produces the same rows whatever the chunk boundaries.
"""

from __future__ import annotations

import struct
import uuid
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field

import orjson

from engram.formation.core import candidate_refusal_id, name_uuid
from engram.formation.corrections import ContentParts, candidate_parts, parts_hash
from engram.formation.proposals import normalise_term
from engram.formation.trusted import unvalidated
from engram.resolution.beliefs import (
    BeliefRow,
    BeliefState,
    Changes,
    EntityRow,
    EpisodeFormed,
    EvidenceRow,
    PrincipalTombstoneRow,
    RefusalRow,
    RejectionRow,
    RunRow,
    TombstoneRow,
)
from engram.resolution.naming import Names
from engram.resolution.resolve import (
    ConflictWithHistory,
    Create,
    Decision,
    Reinforce,
    Rejected,
    Replayed,
    ended_state,
    resolve,
)
from engram.resolution.undo import AliasImage, BatchUndo, BeliefImage
from engram.schemas.claims import (
    Candidate,
    ClaimEnd,
    ClaimsBatchFormed,
    EndKind,
    Refusal,
    RefusalReason,
)
from engram.schemas.common import principal_hash
from engram.schemas.corrections import (
    BeliefCorrected,
    BeliefDeleted,
    CorrectionKind,
    PrincipalForgotten,
)
from engram.schemas.memory_events import MemoryChanged, MemoryEventType

REINFORCE_STEP = 0.05
MAX_CONFIDENCE_BY_REINFORCEMENT = 0.95
MAX_ALIASES = 16
UNSPECIFIED_WEIGHT = 0.5
"""An ``unspecified`` correction multiplies confidence by this: down-weighted, never retired."""
_LOWER_PORTABILITY = {"portable": "contextual", "contextual": "local", "local": "local"}
_BLOCKING = frozenset({CorrectionKind.UNTRUE.value, CorrectionKind.CHANGED.value})
_BELIEF_NAMES = Names("belief")
_EVIDENCE_NAMES = Names("evidence")


@dataclass
class BatchOutcome:
    """What one batch did: its audit counts and the memory events published after commit."""

    skipped: bool = False
    created: list[uuid.UUID] = field(default_factory=list)
    reinforced: list[uuid.UUID] = field(default_factory=list)
    superseded: list[uuid.UUID] = field(default_factory=list)
    conflicted: list[uuid.UUID] = field(default_factory=list)
    promoted: list[uuid.UUID] = field(default_factory=list)
    corrected: list[uuid.UUID] = field(default_factory=list)
    deleted: list[uuid.UUID] = field(default_factory=list)
    undo: BatchUndo = field(default_factory=BatchUndo)
    """What undoing the batch takes (:mod:`resolution.undo`), kept with it for a rewind."""


def real(value: float) -> float:
    """``value`` as PostgreSQL's ``real`` stores it, so a confidence computed in memory equals
    one read back: the same replay gives the same digest whatever the chunk boundaries."""
    rounded: float = struct.unpack("f", struct.pack("f", value))[0]
    return rounded


def resolve_chunk(
    state: BeliefState, batches: Sequence[ClaimsBatchFormed]
) -> tuple[Changes, list[BatchOutcome]]:
    """The rows ``batches`` change, in log order, and what each batch did."""
    changes = Changes()
    outcomes = [_resolve_batch(state, batch, changes) for batch in batches]
    return changes, outcomes


def _resolve_batch(state: BeliefState, batch: ClaimsBatchFormed, changes: Changes) -> BatchOutcome:
    source = batch.source
    changes.formed.append(EpisodeFormed(source.topic, source.partition, source.offset))
    if state.forgotten and principal_hash(batch.tenant, batch.principal) in state.forgotten:
        return BatchOutcome(skipped=True)  # a forgotten principal forms nothing, stores nothing
    if batch.batch_id in state.applied_runs:
        return BatchOutcome(skipped=True)
    state.applied_runs.add(batch.batch_id)
    writer = _BatchWriter(state, batch, changes)
    match batch.correction:
        case PrincipalForgotten():
            writer.forget()
            return writer.outcome
        case BeliefDeleted():
            writer.delete(batch.correction)
            decisions: list[Decision] = []
        case BeliefCorrected():
            decisions = writer.correct(batch.correction)
        case None:
            decisions = [writer.decide_and_apply(candidate) for candidate in batch.candidates]
    changes.runs.append(_run_row(batch, decisions))
    changes.refusals.extend(_refusal_rows(batch, decisions))
    changes.memory_events.extend(memory_events(batch, writer.outcome))
    return writer.outcome


class _BatchWriter:
    """Applies one batch's decisions to the state and records the rows they change."""

    def __init__(self, state: BeliefState, batch: ClaimsBatchFormed, changes: Changes):
        self._state = state
        self._batch = batch
        self._changes = changes
        self._episode = str(batch.episode_id)
        """The episode id as ``name_uuid`` spells it, spelt once for the batch's evidence."""
        self.outcome = BatchOutcome()
        self._imaged: set[uuid.UUID] = set()
        """Rows this batch created or already imaged: a row is imaged once, before its first
        change in the batch."""

    def _before_change(self, belief: BeliefRow) -> None:
        """Image ``belief`` as it was before this batch, unless the batch created it."""
        if belief.belief_id not in self._imaged:
            self._imaged.add(belief.belief_id)
            self.outcome.undo.beliefs_before.append(BeliefImage.of(belief))

    def decide_and_apply(self, candidate: Candidate) -> Decision:
        batch = self._batch
        parts = candidate_parts(candidate)  # spelt once: every step below compares by them
        digest = parts_hash(parts)
        blocked = self._blocked(candidate, digest)
        if blocked is not None:
            return blocked
        decision = resolve(
            candidate,
            parts,
            tenant=batch.tenant,
            principal=batch.principal,
            project=batch.project,
            episode_id=batch.episode_id,
            occurred_at=batch.occurred_at,
            new_belief_id=lambda: _BELIEF_NAMES.name(
                batch.tenant, batch.principal, candidate.candidate_id
            ),
            state=self._state,
        )
        match decision:
            case Create():
                self._create(decision, parts, digest)
            case Reinforce():
                self._reinforce(decision)
            case ConflictWithHistory():
                self._conflict_with_history(decision)
            case Replayed() | Rejected():
                pass
        return decision

    def _blocked(self, candidate: Candidate, digest: str) -> Rejected | None:
        """Deleted content never forms again; content the principal rejected (untrue, changed)
        forms again only from a statement dated after the rejection — a late-arriving or
        replayed statement from before it never undoes it. ``digest``: the candidate's content
        hash."""
        batch = self._batch
        if (batch.tenant, batch.principal, digest) in self._state.tombstones:
            return Rejected(candidate, RefusalReason.TOMBSTONED, "the principal deleted this")
        for rejection in self._state.rejections_of(batch.tenant, batch.principal, digest):
            if rejection.kind in _BLOCKING and rejection.occurred_at >= batch.occurred_at:
                detail = f"the principal said this is {rejection.kind} ({rejection.occurred_at:%Y-%m-%d})"
                return Rejected(candidate, RefusalReason.REJECTED_BY_USER, detail)
        return None

    def correct(self, event: BeliefCorrected) -> list[Decision]:
        """Record the rejection by content, apply it to the current beliefs with that content,
        and for ``changed`` resolve the replacement like any statement of the principal."""
        batch = self._batch
        # Deleted content keeps no words, here as in the store's scrub of a deletion
        # (projections/beliefs/forgetting.py), which also takes the words of a correction whose
        # replacement it deletes: a rewind that resolves the correction again after the
        # deletion must write what the deletion left — not the redacted batch's placeholders,
        # nor the deleted replacement's words (the redacted batch has only its refusal left).
        tombstones = self._state.tombstones
        deleted = (
            (batch.tenant, batch.principal, event.content_hash) in tombstones
            or any(r.reason is RefusalReason.TOMBSTONED for r in batch.refusals)
            or any(
                (batch.tenant, batch.principal, parts_hash(candidate_parts(c))) in tombstones
                for c in batch.candidates
            )
        )
        rejection = RejectionRow(
            rejection_id=name_uuid(
                "rejection", batch.tenant, batch.principal, batch.project, event.event_id
            ),
            tenant=batch.tenant,
            principal=batch.principal,
            content_hash=event.content_hash,
            kind=event.kind.value,
            subject_key=None if deleted else event.content.subject_key,
            relation=event.content.relation,
            object_key=None if deleted else event.content.object_key,
            facet=None if deleted else event.content.facet,
            polarity=event.content.polarity,
            statement=None if deleted else event.statement,
            replacement=None if deleted else event.replacement,
            scope=f"project:{event.project}",
            belief_id=event.belief_id,
            correcting_event=event.event_id,
            run_id=batch.batch_id,
            occurred_at=event.occurred_at,
        )
        self._state.reject(rejection)
        self._changes.rejections.append(rejection)
        targets = [
            b
            for b in self._state.with_content(batch.tenant, batch.principal, event.content_hash)
            if b.current
        ]
        for belief in targets:
            self._apply_rejection(belief, rejection)
            self.outcome.corrected.append(belief.belief_id)
        decisions = [self.decide_and_apply(candidate) for candidate in batch.candidates]
        if event.kind is CorrectionKind.CHANGED:
            self._link_replacement(targets, decisions)
        return decisions

    def _apply_rejection(self, belief: BeliefRow, rejection: RejectionRow) -> None:
        self._before_change(belief)
        at = max(rejection.occurred_at, belief.valid_from)
        match CorrectionKind(rejection.kind):
            case CorrectionKind.UNTRUE:
                belief.status, belief.valid_to, belief.known_to = "retracted", at, at
            case CorrectionKind.CHANGED:
                # Ended now; ``_link_replacement`` names what replaced it.
                belief.status, belief.valid_to, belief.known_to = "superseded", at, at
            case CorrectionKind.NOT_HERE:
                if rejection.scope not in belief.excluded_scopes:
                    belief.excluded_scopes = [*belief.excluded_scopes, rejection.scope]
                belief.portability = _LOWER_PORTABILITY[belief.portability]
            case CorrectionKind.UNSPECIFIED:
                belief.flagged_for_review = True
                belief.confidence = real(belief.confidence * UNSPECIFIED_WEIGHT)
        self._changes.belief_changed(belief)

    def _link_replacement(self, targets: list[BeliefRow], decisions: list[Decision]) -> None:
        replaced_by = next(
            (d.belief_id for d in decisions if isinstance(d, Create | Reinforce)), None
        )
        for old in targets:
            if replaced_by is None:
                old.status = "retracted"  # the replacement was refused: the old value still ended
            else:
                old.superseded_by = replaced_by
        created = self._state.beliefs.get(replaced_by) if replaced_by else None
        if created is not None and targets and created.belief_id in self.outcome.created:
            # Only a belief this batch created: ``supersedes`` is fixed once a belief is written,
            # so whether it is set must not depend on where a chunk happened to end.
            created.supersedes = targets[0].belief_id

    def delete(self, event: BeliefDeleted) -> None:
        """Tombstone the content; the store removes its words from every projection."""
        batch = self._batch
        key = (batch.tenant, batch.principal, event.content_hash)
        for belief in self._state.with_content(batch.tenant, batch.principal, event.content_hash):
            # Rows this chunk already wrote for it are written and then deleted with the rest
            # by the store; later batches of the chunk no longer see it.
            self._state.remove(belief)
            self.outcome.deleted.append(belief.belief_id)
        # The rows that stood before the chunk (announced when they formed): the rewind a
        # deletion takes resolved the principal again without them, so they are not in the
        # state, but they are what this deletion removes. Announced once, by the first
        # deletion of the content in the chunk.
        for belief_id in self._state.deleting.pop(key, []):
            if belief_id not in self.outcome.deleted:
                self.outcome.deleted.append(belief_id)
        if key in self._state.tombstones:
            return  # deleted twice (two requests raced): one tombstone
        self._state.tombstones.add(key)
        self._changes.tombstones.append(
            TombstoneRow(
                batch.tenant,
                batch.principal,
                event.content_hash,
                event.belief_id,
                event.event_id,
                event.occurred_at,
            )
        )

    def forget(self) -> None:
        """Every row of the principal goes (the store deletes them after this chunk's writes);
        only the hash of who they were stays."""
        batch = self._batch
        digest = principal_hash(batch.tenant, batch.principal)
        self._state.forgotten.add(digest)
        self._changes.forgotten.append((batch.tenant, batch.principal))
        self._changes.principal_tombstones.append(
            PrincipalTombstoneRow(digest, batch.episode_id, batch.occurred_at)
        )

    def _belief(self, belief_id: uuid.UUID) -> BeliefRow:
        return self._state.beliefs[belief_id]

    def _create(self, decision: Create, parts: ContentParts, digest: str) -> None:
        at, new_id = self._batch.occurred_at, decision.belief_id
        for old_id in decision.supersedes:
            old = self._belief(old_id)
            self._before_change(old)
            old.status, old.valid_to, old.known_to, old.superseded_by = "superseded", at, at, new_id
            self._changes.belief_changed(old)
            self.outcome.superseded.append(old_id)
        for other_id in decision.conflicts_with:
            self._link_conflict(self._belief(other_id), new_id)
            self.outcome.conflicted.append(other_id)
        belief = self._new_belief(decision, parts, digest)
        self._imaged.add(belief.belief_id)
        self.outcome.undo.beliefs_created.append(belief.belief_id)
        for rejection in self._state.rejections_of(
            belief.tenant, belief.principal, belief.content_hash
        ):
            # A correction replayed ahead of the statement it corrects (another project's
            # partition) still applies to it.
            if rejection.kind not in _BLOCKING and rejection.occurred_at >= belief.valid_from:
                self._apply_rejection(belief, rejection)
        self._state.add(belief)
        self._changes.beliefs_new[belief.belief_id] = belief
        self._evidence(decision.candidate, belief.belief_id)
        self.outcome.created.append(belief.belief_id)

    def _new_belief(self, decision: Create, parts: ContentParts, digest: str) -> BeliefRow:
        c, batch = decision.candidate, self._batch
        subject_key, _, object_key, facet, polarity = parts
        return BeliefRow(
            belief_id=decision.belief_id,
            tenant=batch.tenant,
            principal=batch.principal,
            subject_kind=c.subject.kind.value,
            subject_entity_id=self._entity(c.subject),
            subject_key=subject_key,
            relation=c.relation,
            object_kind=c.object.kind.value,
            object_entity_id=self._entity(c.object),
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

    def _reinforce(self, decision: Reinforce) -> None:
        belief = self._belief(decision.belief_id)
        self._before_change(belief)
        belief.corroboration += 1
        belief.confidence = real(
            min(MAX_CONFIDENCE_BY_REINFORCEMENT, belief.confidence + REINFORCE_STEP)
        )
        belief.last_reinforced_at = max(belief.last_reinforced_at, self._batch.occurred_at)
        belief.origin_scopes = list(decision.origin_scopes)
        if decision.promote_to_user_scope:
            belief.scope = "user"
            self.outcome.promoted.append(belief.belief_id)
        if (
            belief.status == "provisional"
            and belief.corroboration - 1 >= self._batch.activation_corroborations
        ):
            # Enough independent evidence (each from another message: one message's repeats
            # are one candidate) for weak evidence to count as established.
            belief.status = "active"
        self._changes.belief_changed(belief)
        self._evidence(decision.candidate, belief.belief_id)
        self.outcome.reinforced.append(belief.belief_id)

    def _conflict_with_history(self, decision: ConflictWithHistory) -> None:
        """Link the past value and the value that replaced it, both ways, and flag both; the
        past value gains the new evidence but stays superseded (no reversion)."""
        past, current = (
            self._belief(decision.past_belief_id),
            self._belief(decision.current_belief_id),
        )
        self._link_conflict(past, current.belief_id)
        self._link_conflict(current, past.belief_id)
        self._evidence(decision.candidate, past.belief_id)
        self.outcome.conflicted.append(current.belief_id)

    def _link_conflict(self, belief: BeliefRow, other: uuid.UUID) -> None:
        self._before_change(belief)
        if other not in belief.conflicts_with:
            belief.conflicts_with = [*belief.conflicts_with, other]
        belief.flagged_for_review = True
        self._changes.belief_changed(belief)

    def _entity(self, end: ClaimEnd) -> uuid.UUID | None:
        """A named end resolves by normalised name within the principal; the first spelling
        stays canonical and later ones become aliases (at most ``MAX_ALIASES``)."""
        if end.kind is not EndKind.ENTITY:
            return None
        batch = self._batch
        normalized = normalise_term(end.text)
        key = (batch.tenant, batch.principal, normalized)
        entity = self._state.entities.get(key)
        if entity is None:
            entity = EntityRow(
                name_uuid("entity", batch.tenant, batch.principal, normalized),
                batch.tenant,
                batch.principal,
                normalized,
                end.text,
            )
            self._state.entities[key] = entity
            self._changes.entities_new[entity.entity_id] = entity
            self._imaged.add(entity.entity_id)
            self.outcome.undo.entities_created.append(entity.entity_id)
        elif (
            end.text != entity.canonical_name
            and end.text not in entity.aliases
            and len(entity.aliases) < MAX_ALIASES
        ):
            if entity.entity_id not in self._imaged:
                self._imaged.add(entity.entity_id)
                self.outcome.undo.aliases_before.append(
                    AliasImage(entity.entity_id, list(entity.aliases))
                )
            entity.aliases = [*entity.aliases, end.text]
            self._changes.entity_changed(entity)
        return entity.entity_id

    def _evidence(self, c: Candidate, belief_id: uuid.UUID) -> None:
        batch = self._batch
        cited, already = self._state.cited, len(self._state.cited)
        cited.add((belief_id, batch.project, batch.episode_id, c.message_ordinal))
        if len(cited) == already:  # cited before (one hash of the key, not two)
            return
        self._changes.evidence.append(
            EvidenceRow(
                evidence_id=_EVIDENCE_NAMES.name(
                    belief_id, batch.project, self._episode, c.message_ordinal
                ),
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
        )


def _run_row(batch: ClaimsBatchFormed, decisions: Sequence[Decision]) -> RunRow:
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


def _refusal_rows(batch: ClaimsBatchFormed, decisions: Sequence[Decision]) -> list[RefusalRow]:
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


def memory_events(batch: ClaimsBatchFormed, outcome: BatchOutcome) -> list[MemoryChanged]:
    """The events one applied batch produced, in a stable order."""
    kinds: list[tuple[MemoryEventType, list[uuid.UUID]]] = [
        ("memory.formed", outcome.created),
        ("memory.reinforced", outcome.reinforced),
        ("memory.superseded", outcome.superseded),
        ("memory.conflicted", outcome.conflicted),
        ("memory.promoted", outcome.promoted),
        ("memory.corrected", outcome.corrected),
        ("memory.deleted", outcome.deleted),
    ]
    if not any(belief_ids for _, belief_ids in kinds):
        return []
    # Built without validation: every value comes from a validated batch and a name-based id,
    # in the model's field order; the names share the run's part, hashed once.
    names = Names("memory-event", batch.batch_id)
    return [
        unvalidated(
            MemoryChanged,
            {
                "schema_version": 1,
                "type": kind,
                "event_id": names.name(kind, belief_id),
                "tenant": batch.tenant,
                "principal": batch.principal,
                "belief_id": belief_id,
                "run_id": batch.batch_id,
                "episode_id": batch.episode_id,
                "occurred_at": batch.occurred_at,
                "policy_version": batch.policy_version,
                "related_belief_id": None,
                "project": batch.project,
            },
        )
        for kind, belief_ids in kinds
        for belief_id in belief_ids
    ]
