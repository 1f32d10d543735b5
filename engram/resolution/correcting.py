"""What a principal's own word does to their memory: a correction, a deletion, a forgetting.

Each arrives as a batch of its own (:class:`engram.schemas.claims.ClaimsBatchFormed` with a
``correction``) and is applied by the same :class:`engram.resolution.writer.BatchWriter` as
statements, so its changes are imaged for undo and announced like any other. The store does
the erasing these ask for (:mod:`engram.projections.beliefs.forgetting`) after the chunk's
writes; here the state learns of it, so later batches of the chunk see it.
"""

from __future__ import annotations

from engram.resolution.beliefs import BeliefRow, PrincipalTombstoneRow, TombstoneRow
from engram.resolution.rejections import rejection_row
from engram.resolution.resolve import Create, Decision, Reinforce
from engram.resolution.writer import BatchWriter
from engram.schemas.common import principal_hash
from engram.schemas.corrections import BeliefCorrected, BeliefDeleted, CorrectionKind


def correct(writer: BatchWriter, event: BeliefCorrected) -> list[Decision]:
    """Record the rejection by content, apply it to the current beliefs with that content,
    and for ``changed`` resolve the replacement like any statement of the principal."""
    batch, state = writer.batch, writer.state
    rejection = rejection_row(batch, event, state.tombstones)
    state.reject(rejection)
    writer.changes.rejections.append(rejection)
    targets = [
        b
        for b in state.with_content(batch.tenant, batch.principal, event.content_hash)
        if b.current
    ]
    for belief in targets:
        writer.apply_rejection(belief, rejection)
        writer.outcome.corrected.append(belief.belief_id)
    decisions = [writer.decide_and_apply(candidate) for candidate in batch.candidates]
    if event.kind is CorrectionKind.CHANGED:
        _link_replacement(writer, targets, decisions)
    return decisions


def _link_replacement(
    writer: BatchWriter, targets: list[BeliefRow], decisions: list[Decision]
) -> None:
    """Name the replacement as what superseded the changed beliefs; with none (it was
    refused), the old value still ended, retracted."""
    replaced_by = next((d.belief_id for d in decisions if isinstance(d, Create | Reinforce)), None)
    for old in targets:
        if replaced_by is None:
            old.status = "retracted"
        else:
            old.superseded_by = replaced_by
    created = writer.state.beliefs.get(replaced_by) if replaced_by else None
    if created is not None and targets and created.belief_id in writer.outcome.created:
        # Only a belief this batch created: ``supersedes`` is fixed once a belief is written,
        # so whether it is set must not depend on where a chunk happened to end.
        created.supersedes = targets[0].belief_id


def delete(writer: BatchWriter, event: BeliefDeleted) -> None:
    """Tombstone the content; the store removes its words from every projection."""
    batch, state, outcome = writer.batch, writer.state, writer.outcome
    key = (batch.tenant, batch.principal, event.content_hash)
    for belief in state.with_content(batch.tenant, batch.principal, event.content_hash):
        # Rows this chunk already wrote for it are written and then deleted with the rest
        # by the store; later batches of the chunk no longer see it.
        state.remove(belief)
        outcome.deleted.append(belief.belief_id)
    # The rows that stood before the chunk (announced when they formed): the rewind a
    # deletion takes resolved the principal again without them, so they are not in the
    # state, but they are what this deletion removes. Announced once, by the first
    # deletion of the content in the chunk.
    for belief_id in state.deleting.pop(key, []):
        if belief_id not in outcome.deleted:
            outcome.deleted.append(belief_id)
    if key in state.tombstones:
        return  # deleted twice (two requests raced): one tombstone
    state.tombstones.add(key)
    writer.changes.tombstones.append(
        TombstoneRow(
            batch.tenant,
            batch.principal,
            event.content_hash,
            event.belief_id,
            event.event_id,
            event.occurred_at,
        )
    )


def forget(writer: BatchWriter) -> None:
    """Every row of the principal goes (the store deletes them after this chunk's writes);
    only the hash of who they were stays."""
    batch = writer.batch
    digest = principal_hash(batch.tenant, batch.principal)
    writer.state.forgotten.add(digest)
    writer.changes.forgotten.append((batch.tenant, batch.principal))
    writer.changes.principal_tombstones.append(
        PrincipalTombstoneRow(digest, batch.episode_id, batch.occurred_at)
    )
