"""Episode events: the values of ``engram.episodes``, the episodic log and only ground truth.

Version 1. A producer sets ``schema_version`` and ``type``; consumers dispatch on ``type``
through :data:`EpisodeEvent`, a discriminated union, never on loose strings.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field, StrictInt, TypeAdapter, model_validator

from engram.schemas.common import (
    ContractModel,
    EventId,
    EventTime,
    Identifier,
    Role,
    SchemaVersion1,
    StoredText,
    Trust,
    validate_json_naming_text,
)

MAX_MESSAGE_CHARS = 32_000
MAX_MESSAGES_PER_TURN = 64
MAX_ORDINAL = 2**31 - 1
"""Ordinals are stored as PostgreSQL ``integer``: a larger one (valid JSON) reached the
projector, which could not write it."""


def default_trust(role: Role) -> Trust:
    """The trust a message carries when its producer does not say.

    Only the principal's own messages are owner sources; an assistant's words are at most
    affirmed when the producer says so explicitly, and default to untrusted like tool output.
    """
    return Trust.OWNER if role is Role.USER else Trust.UNTRUSTED


class Message(ContractModel):
    ordinal: StrictInt = Field(
        ge=0,
        le=MAX_ORDINAL,
        description="Position of the message within its turn, from 0 (a PostgreSQL integer).",
    )
    role: Role
    content: StoredText = Field(max_length=MAX_MESSAGE_CHARS)
    trust: Trust | None = Field(
        default=None,
        description="Origin trust; defaults from the role (user: owner, otherwise untrusted).",
    )
    author: StoredText | None = Field(
        default=None, max_length=200, description="Who authored it, when not the principal."
    )

    @property
    def effective_trust(self) -> Trust:
        return self.trust if self.trust is not None else default_trust(self.role)

    @model_validator(mode="after")
    def _owner_trust_needs_user_role(self) -> Message:
        if self.trust is Trust.OWNER and self.role is not Role.USER:
            raise ValueError(f"trust 'owner' requires role 'user', got role '{self.role}'")
        return self


class EpisodeBase(ContractModel):
    schema_version: SchemaVersion1 = 1
    event_id: EventId = Field(description="Producer-chosen id; the same id twice is one episode.")
    tenant: Identifier
    principal: Identifier = Field(description="The person the memory is about and for.")
    project: Identifier
    session: Identifier
    occurred_at: EventTime


class TurnAppended(EpisodeBase):
    """One conversation turn: the messages exchanged, in order."""

    type: Literal["turn.appended"] = "turn.appended"
    messages: list[Message] = Field(min_length=1, max_length=MAX_MESSAGES_PER_TURN)

    @model_validator(mode="after")
    def _ordinals_are_unique_and_increasing(self) -> TurnAppended:
        ordinals = [m.ordinal for m in self.messages]
        if ordinals != sorted(set(ordinals)):
            raise ValueError(f"message ordinals must be unique and increasing, got {ordinals}")
        return self


class MemoryRemembered(EpisodeBase):
    """An explicit "remember this" from the agent's remember tool or the user.

    It skips the salience threshold but passes every eligibility gate.
    """

    type: Literal["memory.remember"] = "memory.remember"
    message: Message


EpisodeEvent = Annotated[TurnAppended | MemoryRemembered, Field(discriminator="type")]
episode_adapter: TypeAdapter[TurnAppended | MemoryRemembered] = TypeAdapter(EpisodeEvent)  # type: ignore[arg-type, unused-ignore]


def decode_episode(raw: bytes | str) -> TurnAppended | MemoryRemembered:
    """Decode and validate one episode from raw JSON; raises ``pydantic.ValidationError``.
    Nothing is coerced: the fields pydantic would otherwise convert (an ordinal, the schema
    version, the event id and time) are strict in the models themselves, the same at every
    door whatever mode validates them."""
    return validate_json_naming_text(episode_adapter, raw)


def episode_messages(episode: TurnAppended | MemoryRemembered) -> list[Message]:
    match episode:
        case TurnAppended(messages=messages):
            return list(messages)
        case MemoryRemembered(message=message):
            return [message]
