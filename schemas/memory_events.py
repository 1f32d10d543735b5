"""Memory events: the values of ``engram.memory-events``, so other consumers can follow memory.

Published after the projector's transaction commits, from an outbox written in that same
transaction, so an event is never lost to a crash between commit and publish (it may be
published twice; its ``event_id`` is stable, so consumers deduplicate on it).

Two kinds of value share the topic, told apart by ``type``: :class:`MemoryChanged` (one belief
of a principal formed, reinforced, superseded, …) and :class:`PrincipalErased` (every row of a
principal was deleted by a forgetting; it names them only by the hash their tombstone keeps, so
an application can find, and erase, its own copies). :func:`decode_memory_event` reads either.
"""

from __future__ import annotations

from typing import Annotated, Literal
from uuid import UUID

from pydantic import AwareDatetime, Field, TypeAdapter

from engram.schemas.common import ContractModel, Identifier, SchemaVersionNamed

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
    schema_version: SchemaVersionNamed = Field(
        default=1,
        description="1: `principal` names the principal; 2: it is their pseudonym, the one "
        "their data key's row keeps (docs/privacy.md, \"Who a record is about\"): Engram's "
        "notifier maps it back while the key lives, and webhooks name the principal as before.",
    )
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
    project: Identifier | None = Field(
        default=None,
        description="The project of the episode (or correction) whose batch made the change: "
        "where notifications for it go. Null on events published before it was recorded.",
    )


class PrincipalErased(ContractModel):
    """A principal was forgotten: the projector deleted every row naming them, in the
    transaction this event was queued in. Like their tombstone, it holds only the hash of who
    they were: an application that knows its principals computes it to find whose copies to
    erase, and the event does not name anyone a forgetting has removed."""

    schema_version: SchemaVersionNamed = Field(
        default=1,
        description="2: the event names no record of the log (`episode_id` is null, its id "
        "and time do not follow from the forgetting's record), since that record names the "
        'forgotten principal\'s pseudonym (docs/privacy.md, "Who a record is about").',
    )
    type: Literal["principal.forgotten"] = "principal.forgotten"
    event_id: UUID
    tenant: Identifier
    principal_hash: str = Field(
        pattern="^[0-9a-f]{64}$",
        description="SHA-256 (hex) of `tenant/principal`, what the principal tombstone keeps: "
        "the forgotten are not named again. Compute it for your principals to find whose "
        "copies to erase.",
    )
    episode_id: UUID | None = Field(
        default=None,
        description="Version 1: the forgetting's own event on the episodic log. Version 2: "
        "null — with the hash beside it, it would name whose pseudonym that record holds.",
    )
    occurred_at: AwareDatetime = Field(
        description="When the forgetting was asked for; from version 2, the day only (midnight "
        "UTC): the exact time would pick out the forgetting's record on the log."
    )


MemoryEvent = Annotated[MemoryChanged | PrincipalErased, Field(discriminator="type")]
memory_event_adapter: TypeAdapter[MemoryChanged | PrincipalErased] = TypeAdapter(MemoryEvent)  # type: ignore[arg-type, unused-ignore]


def decode_memory_event(raw: bytes | str) -> MemoryChanged | PrincipalErased:
    """One record of ``engram.memory-events``; pydantic's ``ValidationError`` if it is neither."""
    return memory_event_adapter.validate_json(raw)
