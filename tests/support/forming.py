"""Building episodes and proposals and forming them with the pure core: the one place tests do it.

Identities and times are fixed, so a test reruns identically; everything can be overridden.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime

from engram.formation.core import form_episode
from engram.formation.policy import FormationPolicy
from engram.formation.proposals import Proposal
from engram.schemas.claims import ClaimsBatchFormed, SourcePosition
from engram.schemas.common import Role, Trust
from engram.schemas.episodes import MemoryRemembered, Message, TurnAppended

SOURCE = SourcePosition(topic="engram.episodes", partition=0, offset=0)
WHEN = datetime(2026, 1, 1, tzinfo=UTC)
POLICY = FormationPolicy()


def message(
    content: str, role: Role = Role.USER, trust: Trust | None = None, ordinal: int = 0
) -> Message:
    return Message(ordinal=ordinal, role=role, content=content, trust=trust)


def episode(
    *messages: Message | tuple[Role, str] | str,
    event: int = 1,
    tenant: str = "t",
    principal: str = "ada",
    project: str = "engram",
    occurred_at: datetime = WHEN,
) -> TurnAppended:
    """A turn of the given messages (text alone is a user message), numbered in order."""
    numbered = [_message(m).model_copy(update={"ordinal": i}) for i, m in enumerate(messages)]
    return TurnAppended(
        event_id=uuid.UUID(int=event),
        tenant=tenant,
        principal=principal,
        project=project,
        session="s",
        occurred_at=occurred_at,
        messages=numbered,
    )


def _message(given: Message | tuple[Role, str] | str) -> Message:
    if isinstance(given, Message):
        return given
    if isinstance(given, str):
        return message(given)
    role, content = given
    return message(content, role)


def remembered(
    content: str, role: Role = Role.USER, trust: Trust | None = None, *, event: int = 2
) -> MemoryRemembered:
    """An explicit ``memory.remember`` episode."""
    return MemoryRemembered(
        event_id=uuid.UUID(int=event),
        tenant="t",
        principal="ada",
        project="engram",
        session="s",
        occurred_at=WHEN,
        message=message(content, role, trust),
    )


def proposal(
    subject: str = "I",
    relation: str = "lives_in",
    obj: str = "Lisbon",
    quote: str = "I live in Lisbon",
    **extra: object,
) -> Proposal:
    """An asserted, present-tense proposal; any other field can be given."""
    fields: dict[str, object] = {"polarity": "assert", "tense": "present", "extractor": "test"}
    fields.update(extra)
    return Proposal(subject=subject, relation=relation, object=obj, quote=quote, **fields)  # type: ignore[arg-type]


def form(
    episode: TurnAppended | MemoryRemembered,
    *proposals: Proposal | tuple[int, Proposal],
    by_message: Mapping[int, Sequence[Proposal]] | None = None,
    policy: FormationPolicy = POLICY,
    source: SourcePosition = SOURCE,
) -> ClaimsBatchFormed:
    """Form ``episode`` from proposals: bare ones for message 0, ``(ordinal, proposal)`` pairs
    for any message, or a whole ``by_message`` mapping."""
    grouped: dict[int, list[Proposal]] = {k: list(v) for k, v in (by_message or {}).items()}
    for given in proposals:
        ordinal, found = given if isinstance(given, tuple) else (0, given)
        grouped.setdefault(ordinal, []).append(found)
    return form_episode(episode, policy, grouped, source=source)
