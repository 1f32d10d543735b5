"""The memory events one applied batch publishes (after commit, through the outbox), named so a
replay or a rewind queues each once."""

from __future__ import annotations

import uuid

from engram.formation.trusted import unvalidated
from engram.resolution.naming import Names
from engram.resolution.outcome import BatchOutcome
from engram.schemas.claims import ClaimsBatchFormed
from engram.schemas.memory_events import MemoryChanged, MemoryEventType


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
