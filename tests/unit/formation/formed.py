"""A helper for the deterministic arm's tests: what forms from one message, as tuples."""

from __future__ import annotations

import uuid
from datetime import UTC, date, datetime

from formation.core import form_episode
from formation.deterministic import propose
from formation.policy import FormationPolicy
from schemas.claims import ClaimsBatchFormed, SourcePosition
from schemas.common import Role
from schemas.episodes import Message, TurnAppended

EPISODE_DAY = date(2024, 5, 8)
"""A Wednesday: "last Saturday" is 2024-05-04, "yesterday" 2024-05-07."""


def batch(content: str, role: Role = Role.USER) -> ClaimsBatchFormed:
    episode = TurnAppended(
        event_id=uuid.uuid5(uuid.NAMESPACE_URL, content),
        tenant="t",
        principal="p",
        project="proj",
        session="s",
        occurred_at=datetime(2024, 5, 8, 12, 0, tzinfo=UTC),
        messages=[Message(ordinal=0, role=role, content=content)],
    )
    proposals = propose(content, occurred_on=EPISODE_DAY)
    source = SourcePosition(topic="t", partition=0, offset=0)
    return form_episode(episode, FormationPolicy(), {0: proposals}, source=source)


def formed(content: str, role: Role = Role.USER) -> set[tuple[str, str, str]]:
    """(subject, relation, object) of every candidate; retractions carry a "no longer " verb."""
    return {
        (
            c.subject.text,
            c.relation if c.polarity.value == "assert" else f"no longer {c.relation}",
            c.object.text,
        )
        for c in batch(content, role).candidates
    }
