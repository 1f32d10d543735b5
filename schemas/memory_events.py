"""Memory events: the values of ``engram.memory-events``, so other consumers can follow memory.

Published after the projector's transaction commits, from an outbox written in that same
transaction, so an event is never lost to a crash between commit and publish (it may be
published twice; its ``event_id`` is stable, so consumers deduplicate on it).
"""

from __future__ import annotations

from typing import Literal
from uuid import UUID

from pydantic import AwareDatetime

from engram.schemas.common import ContractModel, Identifier

MemoryEventType = Literal[
    "memory.formed",
    "memory.reinforced",
    "memory.superseded",
    "memory.conflicted",
    "memory.promoted",
    "memory.corrected",
    "memory.deleted",
]


class MemoryChanged(ContractModel):
    schema_version: Literal[1] = 1
    type: MemoryEventType
    event_id: UUID
    tenant: Identifier
    principal: Identifier
    belief_id: UUID
    run_id: UUID
    episode_id: UUID
    occurred_at: AwareDatetime
    policy_version: str
    related_belief_id: UUID | None = None
