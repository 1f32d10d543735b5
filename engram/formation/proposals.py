"""What an extractor may propose. A proposal is not a claim: it has no byte span.

Both extractor arms (deterministic and model-assisted) produce these; admission turns the ones
that survive into canonical :class:`engram.schemas.claims.Candidate` values. Because a proposal cannot
carry a span, no extractor can smuggle an unverified citation into storage.
"""

from __future__ import annotations

from dataclasses import dataclass

SPEAKER_TERMS: frozenset[str] = frozenset(
    {"i", "me", "my", "mine", "myself", "i'm", "i am", "speaker"}
)
"""First-person terms: an end written with one of these is the principal, if the role binds."""

PROJECT_TERMS: frozenset[str] = frozenset({"we", "us", "our team", "the team", "project"})
"""Terms for the consolidation's project (project decisions: "we decided to …")."""

UNRESOLVABLE_TERMS: frozenset[str] = frozenset(
    {
        "he",
        "him",
        "his",
        "she",
        "her",
        "hers",
        "it",
        "its",
        "they",
        "them",
        "their",
        "theirs",
        "this",
        "that",
        "these",
        "those",
        "someone",
        "somebody",
        "something",
        "anyone",
        "anybody",
        "everyone",
        "everybody",
        "nobody",
        "one",
        "you",
        "your",
        "yours",
        "yourself",
        "here",
        "there",
        "thing",
        "stuff",
        "the user",
        "user",
    }
)
"""Subjects that name nothing on their own; a claim about one is refused, quote or not."""

POLARITIES: frozenset[str] = frozenset({"assert", "retract", "deny", "hedge"})
"""Accepted polarity words. Only ``assert`` and ``retract`` are admitted; anything else,
including a missing value, is refused as ``not_asserted``."""

TENSES: frozenset[str] = frozenset({"present", "past", "future", "hypothetical"})


@dataclass(frozen=True, slots=True)
class Proposal:
    """A claim an extractor proposes about one message.

    ``subject`` and ``object`` are written as the message wrote them ("I", "my sister",
    "Berlin"); ``quote`` must be copied from the message. ``polarity`` and ``tense`` are taken
    verbatim and checked, never defaulted.
    """

    subject: str
    relation: str
    object: str
    quote: str
    polarity: str | None
    tense: str | None
    extractor: str
    facet: str | None = None
    statement: str | None = None
    confidence: float | None = None
    portability: str | None = None
    scope: str | None = None


def normalise_term(text: str) -> str:
    """Lower case with runs of whitespace collapsed: how ends are compared, never merged."""
    return " ".join(text.lower().split())


def is_speaker_term(text: str) -> bool:
    return normalise_term(text) in SPEAKER_TERMS


def is_project_term(text: str) -> bool:
    return normalise_term(text) in PROJECT_TERMS
