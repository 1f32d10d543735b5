"""Everything on ``engram.episodes``: what producers append (turns, explicit memories) and what
Engram appends for a principal (corrections, deletions, forgetting). Consumers of the log decode
this union and dispatch on ``type``; producers' doors accept only :data:`~engram.schemas.episodes.EpisodeEvent`.
"""

from __future__ import annotations

from typing import Annotated

from pydantic import Field, TypeAdapter

from engram.schemas.common import validate_json_naming_text
from engram.schemas.corrections import BeliefCorrected, BeliefDeleted, PrincipalForgotten
from engram.schemas.episodes import MemoryRemembered, TurnAppended
from engram.schemas.sealed import SealedEvent

OpenEvent = TurnAppended | MemoryRemembered | BeliefCorrected | BeliefDeleted | PrincipalForgotten
"""An event whose words, if any, are readable: what formation and the indexer work on."""
LogEvent = OpenEvent | SealedEvent
"""Anything on the log: an open event, or one whose words are sealed (:mod:`engram.schemas.sealed`)."""
LogEventField = Annotated[
    TurnAppended
    | MemoryRemembered
    | BeliefCorrected
    | BeliefDeleted
    | PrincipalForgotten
    | SealedEvent,
    Field(discriminator="type"),
]
log_event_adapter: TypeAdapter[LogEvent] = TypeAdapter(LogEventField)  # type: ignore[arg-type, unused-ignore]


OpenEventField = Annotated[
    TurnAppended | MemoryRemembered | BeliefCorrected | BeliefDeleted | PrincipalForgotten,
    Field(discriminator="type"),
]
open_event_adapter: TypeAdapter[OpenEvent] = TypeAdapter(OpenEventField)  # type: ignore[arg-type, unused-ignore]


def decode_open_event(raw: bytes | str) -> OpenEvent:
    """Decode and validate what a sealed event held; a sealed event inside one is refused."""
    return validate_json_naming_text(open_event_adapter, raw)


def decode_log_event(raw: bytes | str) -> LogEvent:
    """Decode and validate one record of the episodic log; raises ``pydantic.ValidationError``.
    Nothing is coerced (:func:`engram.schemas.episodes.decode_episode`): a raw write whose
    ordinal is ``"0"`` or whose time is a number is dead-lettered with the field named."""
    return validate_json_naming_text(log_event_adapter, raw)
