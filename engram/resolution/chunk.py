"""Resolving a chunk of claims batches into row changes: the whole rule, decided in memory.

Each batch, in the order given (canonical order: :mod:`engram.resolution.ordering`), goes
through these stages, each in a module of its own:

1. **Formed.** Its episode is marked formed, whatever follows: the batch was read.
2. **Skip.** A batch of a forgotten principal forms nothing and stores nothing; a batch whose
   run exists is a redelivery, a no-op. Checked before anything changes, so neither leaves a
   trace.
3. **Apply.** The principal's own word first — a forgetting (nothing else of the batch
   counts), a deletion or a correction (:mod:`engram.resolution.correcting`) — then its
   statements, each decided against the state the earlier candidates and batches left and
   turned into rows (:mod:`engram.resolution.writer`). A correction comes before its
   replacement statement so the replacement can name what it replaced.
4. **Audit.** The run row and the refusal rows (:mod:`engram.resolution.audit`), from the
   decisions just made.
5. **Events.** The memory events the batch publishes (:mod:`engram.resolution.events`), from
   what it did.

The store writes the result with one statement per table and decides nothing. Every value
comes from the batches and the loaded rows (event time, never the clock), so a replay produces
the same rows whatever the chunk boundaries.
"""

from __future__ import annotations

from collections.abc import Sequence

from engram.resolution.audit import refusal_rows, run_row
from engram.resolution.beliefs import BeliefState, Changes, EpisodeFormed
from engram.resolution.correcting import correct, delete, forget
from engram.resolution.events import memory_events
from engram.resolution.outcome import BatchOutcome
from engram.resolution.resolve import Decision
from engram.resolution.writer import BatchWriter
from engram.schemas.claims import ClaimsBatchFormed
from engram.schemas.common import principal_hash
from engram.schemas.corrections import BeliefCorrected, BeliefDeleted, PrincipalForgotten

__all__ = ["BatchOutcome", "resolve_chunk"]
"""What the projector and the tools use; the stages are their own modules' names."""


def resolve_chunk(
    state: BeliefState, batches: Sequence[ClaimsBatchFormed]
) -> tuple[Changes, list[BatchOutcome]]:
    """The rows ``batches`` change, in log order, and what each batch did."""
    changes = Changes()
    outcomes = [_resolve_batch(state, batch, changes) for batch in batches]
    return changes, outcomes


def _resolve_batch(state: BeliefState, batch: ClaimsBatchFormed, changes: Changes) -> BatchOutcome:
    """One batch through the stages, in the order the module's docstring gives."""
    source = batch.source
    changes.formed.append(EpisodeFormed(source.topic, source.partition, source.offset))
    if _skipped(state, batch):
        return BatchOutcome(skipped=True)
    state.applied_runs.add(batch.batch_id)
    writer = BatchWriter(state, batch, changes)
    if isinstance(batch.correction, PrincipalForgotten):
        forget(writer)
        return writer.outcome
    decisions = _apply(writer)
    changes.runs.append(run_row(batch, decisions))
    changes.refusals.extend(refusal_rows(batch, decisions))
    changes.memory_events.extend(memory_events(batch, writer.outcome))
    return writer.outcome


def _skipped(state: BeliefState, batch: ClaimsBatchFormed) -> bool:
    """Whether ``batch`` changes nothing: its principal is forgotten, or its run is applied."""
    if state.forgotten and principal_hash(batch.tenant, batch.principal) in state.forgotten:
        return True  # a forgotten principal forms nothing, stores nothing
    return batch.batch_id in state.applied_runs


def _apply(writer: BatchWriter) -> list[Decision]:
    """Apply the batch's deletion or correction, if any, and decide its statements."""
    match writer.batch.correction:
        case BeliefDeleted() as event:
            delete(writer, event)
            return []
        case BeliefCorrected() as event:
            return correct(writer, event)
        case _:
            return [writer.decide_and_apply(candidate) for candidate in writer.batch.candidates]
