"""What a pattern found in a clause, before the clause's mood sets polarity and tense."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Finding:
    """One claim shape a pattern matched.

    ``polarity`` and ``tense`` are set only when the pattern itself decides them ("I sold my
    car" retracts ownership; "I moved to Berlin" is a present home); otherwise the clause's
    mood decides.
    """

    subject: str
    relation: str
    object: str
    facet: str | None = None
    confidence: float = 0.5
    polarity: str | None = None
    tense: str | None = None


WEAK_CONFIDENCE = 0.4
"""For claim shapes that are often incidental ("I like …", "I have …")."""

REFUSED_CONFIDENCE = 0.25
"""For proposals made only so that their refusal is recorded (hedges, denials)."""
