"""What a principal's correction does to a belief with the corrected content, and which of
their rejections still block a statement.

A correction is recorded by content (:class:`engram.resolution.beliefs.RejectionRow`), not only
against the belief it named, so it applies to every current belief with that content, to one
formed later from a statement that a correction replayed ahead of it already covers, and to
statements that try to form the content again (:func:`blocks`).
"""

from __future__ import annotations

from datetime import datetime

from engram.formation.core import name_uuid
from engram.formation.corrections import candidate_parts, parts_hash
from engram.resolution.beliefs import BeliefRow, RejectionRow
from engram.resolution.confidence import down_weighted
from engram.schemas.claims import ClaimsBatchFormed, RefusalReason
from engram.schemas.corrections import BeliefCorrected, CorrectionKind

BLOCKING = frozenset({CorrectionKind.UNTRUE.value, CorrectionKind.CHANGED.value})
"""Rejections that refuse the content again; the others only qualify a belief that has it."""
_LOWER_PORTABILITY = {"portable": "contextual", "contextual": "local", "local": "local"}


def blocks(rejection: RejectionRow, occurred_at: datetime) -> bool:
    """Whether ``rejection`` refuses a statement of its content told at ``occurred_at``: content
    the principal rejected (untrue, changed) forms again only from a statement dated after the
    rejection — a late-arriving or replayed statement from before it never undoes it."""
    return rejection.kind in BLOCKING and rejection.occurred_at >= occurred_at


def qualifies(rejection: RejectionRow, belief: BeliefRow) -> bool:
    """Whether a non-blocking rejection applies to a belief just formed: one dated at or after
    the belief's start (a correction replayed ahead of the statement it corrects, from another
    project's partition, still applies to it)."""
    return rejection.kind not in BLOCKING and rejection.occurred_at >= belief.valid_from


def rejection_row(
    batch: ClaimsBatchFormed, event: BeliefCorrected, tombstones: set[tuple[str, str, str]]
) -> RejectionRow:
    """The rejection ``event`` records, by content. Deleted content keeps no words, here as in
    the store's scrub of a deletion (:mod:`engram.projections.beliefs.forgetting`), which also
    takes the words of a correction whose replacement it deletes: a rewind that resolves the
    correction again after the deletion must write what the deletion left — not the redacted
    batch's placeholders, nor the deleted replacement's words (the redacted batch has only its
    refusal left)."""
    deleted = _words_deleted(batch, event, tombstones)
    return RejectionRow(
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


def _words_deleted(
    batch: ClaimsBatchFormed, event: BeliefCorrected, tombstones: set[tuple[str, str, str]]
) -> bool:
    """Whether the corrected content, or its replacement, has been deleted (or the batch was
    redacted for it)."""
    return (
        (batch.tenant, batch.principal, event.content_hash) in tombstones
        or any(r.reason is RefusalReason.TOMBSTONED for r in batch.refusals)
        or any(
            (batch.tenant, batch.principal, parts_hash(candidate_parts(c))) in tombstones
            for c in batch.candidates
        )
    )


def apply_rejection(belief: BeliefRow, rejection: RejectionRow) -> None:
    """Change ``belief`` as ``rejection`` says: ended (untrue, changed), kept out of the
    rejecting project and made less portable (not here), or flagged and down-weighted
    (unspecified)."""
    at = max(rejection.occurred_at, belief.valid_from)
    match CorrectionKind(rejection.kind):
        case CorrectionKind.UNTRUE:
            belief.status, belief.valid_to, belief.known_to = "retracted", at, at
        case CorrectionKind.CHANGED:
            # Ended now; the correction's replacement names what replaced it.
            belief.status, belief.valid_to, belief.known_to = "superseded", at, at
        case CorrectionKind.NOT_HERE:
            if rejection.scope not in belief.excluded_scopes:
                belief.excluded_scopes = [*belief.excluded_scopes, rejection.scope]
            belief.portability = _LOWER_PORTABILITY[belief.portability]
        case CorrectionKind.UNSPECIFIED:
            belief.flagged_for_review = True
            belief.confidence = down_weighted(belief.confidence)
