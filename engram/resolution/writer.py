"""Applying one batch's decisions to the state a chunk carries, and recording the rows they
change: the statement path of :func:`engram.resolution.chunk.resolve_chunk`.

A candidate is first checked against what the principal deleted or rejected, then decided
(:func:`engram.resolution.resolve.resolve`) against the state the earlier candidates and
batches left, and the decision turned into rows — a new belief with its entities and evidence,
a reinforcement (corroboration, confidence, provisional → active after the policy's number of
independent corroborations, promotion to user scope), a supersession, a conflict link. Before
its first change in the batch, every older row is imaged for the batch's undo record
(:mod:`engram.resolution.undo`), so a late batch can rewind this one. Corrections reuse the
writer (:mod:`engram.resolution.correcting`).
"""

from __future__ import annotations

import uuid

from engram.formation.core import name_uuid
from engram.formation.corrections import ContentParts, candidate_parts, parts_hash
from engram.formation.proposals import normalise_term
from engram.resolution.beliefs import BeliefRow, BeliefState, Changes, EntityRow, RejectionRow
from engram.resolution.confidence import reinforced
from engram.resolution.naming import Names
from engram.resolution.new_rows import belief_row, evidence_row
from engram.resolution.outcome import BatchOutcome
from engram.resolution.rejections import apply_rejection, blocks, qualifies
from engram.resolution.resolve import (
    ConflictWithHistory,
    Create,
    Decision,
    Reinforce,
    Rejected,
    Replayed,
    resolve,
)
from engram.resolution.undo import AliasImage, BeliefImage
from engram.schemas.claims import Candidate, ClaimEnd, ClaimsBatchFormed, EndKind, RefusalReason

MAX_ALIASES = 16
_BELIEF_NAMES = Names("belief")


class BatchWriter:
    """Applies one batch's decisions to the state and records the rows they change."""

    def __init__(self, state: BeliefState, batch: ClaimsBatchFormed, changes: Changes):
        self.state = state
        self.batch = batch
        self.changes = changes
        self._episode = str(batch.episode_id)
        """The episode id as ``name_uuid`` spells it, spelt once for the batch's evidence."""
        self.outcome = BatchOutcome()
        self._imaged: set[uuid.UUID] = set()
        """Rows this batch created or already imaged: a row is imaged once, before its first
        change in the batch."""

    def before_change(self, belief: BeliefRow) -> None:
        """Image ``belief`` as it was before this batch, unless the batch created it."""
        if belief.belief_id not in self._imaged:
            self._imaged.add(belief.belief_id)
            self.outcome.undo.beliefs_before.append(BeliefImage.of(belief))

    def belief(self, belief_id: uuid.UUID) -> BeliefRow:
        return self.state.beliefs[belief_id]

    def apply_rejection(self, belief: BeliefRow, rejection: RejectionRow) -> None:
        """Apply ``rejection`` to ``belief``, imaged first and recorded as changed."""
        self.before_change(belief)
        apply_rejection(belief, rejection)
        self.changes.belief_changed(belief)

    def decide_and_apply(self, candidate: Candidate) -> Decision:
        """Decide ``candidate`` against the state and apply the decision."""
        batch = self.batch
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
            state=self.state,
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
        """Deleted content never forms again; content the principal rejected forms again only
        from a statement dated after the rejection
        (:func:`engram.resolution.rejections.blocks`). ``digest``: the candidate's content
        hash."""
        batch = self.batch
        if (batch.tenant, batch.principal, digest) in self.state.tombstones:
            return Rejected(candidate, RefusalReason.TOMBSTONED, "the principal deleted this")
        for rejection in self.state.rejections_of(batch.tenant, batch.principal, digest):
            if blocks(rejection, batch.occurred_at):
                detail = f"the principal said this is {rejection.kind} ({rejection.occurred_at:%Y-%m-%d})"
                return Rejected(candidate, RefusalReason.REJECTED_BY_USER, detail)
        return None

    def _create(self, decision: Create, parts: ContentParts, digest: str) -> None:
        at, new_id = self.batch.occurred_at, decision.belief_id
        for old_id in decision.supersedes:
            old = self.belief(old_id)
            self.before_change(old)
            old.status, old.valid_to, old.known_to, old.superseded_by = "superseded", at, at, new_id
            self.changes.belief_changed(old)
            self.outcome.superseded.append(old_id)
        for other_id in decision.conflicts_with:
            self._link_conflict(self.belief(other_id), new_id)
            self.outcome.conflicted.append(other_id)
        c = decision.candidate
        entities = (self._entity(c.subject), self._entity(c.object))
        belief = belief_row(self.batch, decision, parts, digest, entities)
        self._imaged.add(belief.belief_id)
        self.outcome.undo.beliefs_created.append(belief.belief_id)
        for rejection in self.state.rejections_of(
            belief.tenant, belief.principal, belief.content_hash
        ):
            if qualifies(rejection, belief):
                self.apply_rejection(belief, rejection)
        self.state.add(belief)
        self.changes.beliefs_new[belief.belief_id] = belief
        self._evidence(c, belief.belief_id)
        self.outcome.created.append(belief.belief_id)

    def _reinforce(self, decision: Reinforce) -> None:
        belief = self.belief(decision.belief_id)
        self.before_change(belief)
        belief.corroboration += 1
        belief.confidence = reinforced(belief.confidence)
        belief.last_reinforced_at = max(belief.last_reinforced_at, self.batch.occurred_at)
        belief.origin_scopes = list(decision.origin_scopes)
        if decision.promote_to_user_scope:
            belief.scope = "user"
            self.outcome.promoted.append(belief.belief_id)
        if (
            belief.status == "provisional"
            and belief.corroboration - 1 >= self.batch.activation_corroborations
        ):
            # Enough independent evidence (each from another message: one message's repeats
            # are one candidate) for weak evidence to count as established.
            belief.status = "active"
        self.changes.belief_changed(belief)
        self._evidence(decision.candidate, belief.belief_id)
        self.outcome.reinforced.append(belief.belief_id)

    def _conflict_with_history(self, decision: ConflictWithHistory) -> None:
        """Link the past value and the value that replaced it, both ways, and flag both; the
        past value gains the new evidence but stays superseded (no reversion)."""
        past, current = (
            self.belief(decision.past_belief_id),
            self.belief(decision.current_belief_id),
        )
        self._link_conflict(past, current.belief_id)
        self._link_conflict(current, past.belief_id)
        self._evidence(decision.candidate, past.belief_id)
        self.outcome.conflicted.append(current.belief_id)

    def _link_conflict(self, belief: BeliefRow, other: uuid.UUID) -> None:
        self.before_change(belief)
        if other not in belief.conflicts_with:
            belief.conflicts_with = [*belief.conflicts_with, other]
        belief.flagged_for_review = True
        self.changes.belief_changed(belief)

    def _entity(self, end: ClaimEnd) -> uuid.UUID | None:
        """A named end resolves by normalised name within the principal; the first spelling
        stays canonical and later ones become aliases (at most ``MAX_ALIASES``)."""
        if end.kind is not EndKind.ENTITY:
            return None
        batch = self.batch
        normalized = normalise_term(end.text)
        key = (batch.tenant, batch.principal, normalized)
        entity = self.state.entities.get(key)
        if entity is None:
            entity = EntityRow(
                name_uuid("entity", batch.tenant, batch.principal, normalized),
                batch.tenant,
                batch.principal,
                normalized,
                end.text,
            )
            self.state.entities[key] = entity
            self.changes.entities_new[entity.entity_id] = entity
            self._imaged.add(entity.entity_id)
            self.outcome.undo.entities_created.append(entity.entity_id)
        elif (
            end.text != entity.canonical_name
            and end.text not in entity.aliases
            and len(entity.aliases) < MAX_ALIASES
        ):
            self._add_alias(entity, end.text)
        return entity.entity_id

    def _add_alias(self, entity: EntityRow, spelling: str) -> None:
        """Add ``spelling`` to ``entity``'s aliases, imaging them first."""
        if entity.entity_id not in self._imaged:
            self._imaged.add(entity.entity_id)
            self.outcome.undo.aliases_before.append(
                AliasImage(entity.entity_id, list(entity.aliases))
            )
        entity.aliases = [*entity.aliases, spelling]
        self.changes.entity_changed(entity)

    def _evidence(self, c: Candidate, belief_id: uuid.UUID) -> None:
        """Cite ``c`` as evidence of ``belief_id``, once per belief and message."""
        batch = self.batch
        cited, already = self.state.cited, len(self.state.cited)
        cited.add((belief_id, batch.project, batch.episode_id, c.message_ordinal))
        if len(cited) == already:  # cited before (one hash of the key, not two)
            return
        self.changes.evidence.append(evidence_row(batch, self._episode, c, belief_id))
