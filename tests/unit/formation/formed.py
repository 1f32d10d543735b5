"""A helper for the deterministic arm's tests: what forms from one message, as tuples."""

from __future__ import annotations

from datetime import UTC, date, datetime

from engram.formation.deterministic import propose
from engram.schemas.claims import Candidate, ClaimsBatchFormed, Tense
from engram.schemas.common import Role
from tests.support.forming import episode, form, message

EPISODE_DAY = date(2024, 5, 8)
"""A Wednesday: "last Saturday" is 2024-05-04, "yesterday" 2024-05-07."""


def batch(content: str, role: Role = Role.USER) -> ClaimsBatchFormed:
    proposals = propose(content, occurred_on=EPISODE_DAY)
    at = datetime(2024, 5, 8, 12, 0, tzinfo=UTC)
    made = episode(message(content, role), principal="p", project="proj", occurred_at=at)
    return form(made, by_message={0: proposals})


def formed(content: str, role: Role = Role.USER) -> set[tuple[str, str, str]]:
    """(subject, relation, object) of every candidate; retractions carry a "no longer " verb,
    states kept as history a "used to " one."""
    return {(c.subject.text, _verb(c), c.object.text) for c in batch(content, role).candidates}


def _verb(candidate: Candidate) -> str:
    if candidate.polarity.value != "assert":
        return f"no longer {candidate.relation}"
    if candidate.tense is Tense.PAST and not candidate.is_event:
        return f"used to {candidate.relation}"
    return candidate.relation
