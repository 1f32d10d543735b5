"""Ownership: "I have a Garmin watch and a Tesla", "I sold my car", "I no longer have my watch"."""

from __future__ import annotations

import re

from engram.formation.deterministic.findings import WEAK_CONFIDENCE, Finding
from engram.formation.deterministic.nouns import closed
from engram.formation.deterministic.predicate import Predicate
from engram.formation.deterministic.terms import object_list, object_phrase
from engram.formation.deterministic.umbrellas import under_umbrella

_NOT_POSSESSIONS = frozenset(
    {
        "question",
        "questions",
        "meeting",
        "meetings",
        "idea",
        "ideas",
        "problem",
        "problems",
        "issue",
        "issues",
        "feeling",
        "call",
        "calls",
        "appointment",
        "time",
        "minute",
        "moment",
        "chance",
        "lot",
        "bit",
        "look",
        "sense",
        "trouble",
        "fun",
        "dinner",
        "lunch",
        "breakfast",
        "break",
        "day",
        "week",
        "weekend",
        "cold",
        "fever",
        "headache",
        "flu",
        "kids",
        "children",
        "son",
        "daughter",
        "sons",
        "daughters",
        "brother",
        "sister",
        "brothers",
        "sisters",
        "kid",
        "child",
        "allergy",
        "deadline",
        "plan",
        "plans",
        "job",
        "experience",
        "background",
        "habit",
        "tendency",
        "doubt",
        "doubts",
        "concern",
        "concerns",
        "suggestion",
        "request",
        "favour",
        "favor",
        "bug",
        "error",
        "test",
        "exam",
        "interview",
        "party",
        "date",
        "goal",
        "hunch",
        "crush",
        "dream",
        "way",
        "choice",
        "option",
        "right",
        "reason",
        "need",
        "point",
        "access",
        "married",
        "engaged",
        "divorced",
        "sick",
        "promoted",
        "fired",
        "hired",
        "used",
        "ready",
        "started",
        "home",
        "back",
        "work",
        "to",
        "been",
        "nothing",
        "something",
        "anything",
        "everything",
        "it",
        "one",
        "them",
        "that",
        "this",
        "these",
        "those",
        "any",
        "no",
        "wife",
        "husband",
        "partner",
        "boyfriend",
        "girlfriend",
        "mother",
        "father",
        "friend",
        "friends",
        "degree",
        "preference",
        "opinion",
        "feelings",
        "thoughts",
        "thought",
        "task",
        "tasks",
    }
)
_ITEM_TAIL = re.compile(r"\s+(?:for|from|at|in|on|with|since)\s+.*$", re.IGNORECASE)
_ACQUIRED = frozenset({"buy", "get"})
_PARTED = frozenset({"sell", "lose"})


_WITH = re.compile(
    r"\s+(?:with|along\s+with|including|complete\s+with|that\s+came\s+with|which\s+came\s+with)\s+",
    re.IGNORECASE,
)
"""What a thing comes with is not another thing told: "a gaming PC with a mouse and a keyboard"
owns the PC."""
_ACCESSORIES = closed(
    "mouse keyboard charger cable cables case cover strap bag stand mousepad adapter dongle"
    " sleeve batteries battery"
)
"""Trivia beside a main thing: "a new laptop, a mouse and a keyboard" owns the laptop."""


def _possessions(rest: str) -> list[str]:
    if rest.lower().startswith(("to ", "rid of", "away ", "got ")):
        return []
    rest = under_umbrella(rest) or rest
    items = [_ITEM_TAIL.sub("", item) for item in object_list(_WITH.split(rest, maxsplit=1)[0])]
    owned = [
        item
        for item in items
        if not ({item.lower().split()[0], item.lower().split()[-1]} & _NOT_POSSESSIONS)
    ]
    main = [item for item in owned if item.lower().split()[-1] not in _ACCESSORIES]
    return main if main and len(main) < len(owned) else owned


def propose_ownership(predicate: Predicate) -> list[Finding]:
    """Ownership from have/own/drive/buy/get, and its retraction from sell/lose/give away."""
    lemma, rest = predicate.lemma, predicate.rest
    if lemma == "have" and rest.lower().startswith("access to "):
        return [Finding("I", "has_access_to", object_phrase(rest[len("access to ") :]))]
    if lemma == "get" and rest.lower().startswith("rid of "):
        return _parted(predicate.subject, rest[len("rid of ") :])
    if lemma == "give":  # "gave a talk" is an event, not a parting: only "gave away" parts
        return _parted(predicate.subject, rest[5:]) if rest.lower().startswith("away ") else []
    if lemma in _PARTED:
        return _parted(predicate.subject, rest) if predicate.form == "past" else []
    tense = None
    if lemma in _ACQUIRED:
        if predicate.form != "past" and not predicate.perfect:
            return []
        tense = "present"
    confidence = WEAK_CONFIDENCE if lemma == "have" else 0.5
    if rest.lower().startswith("no "):
        rest = rest[3:]
        return [
            Finding(predicate.subject, "owns", item, polarity="deny", confidence=confidence)
            for item in _possessions(rest)
        ]
    return [
        Finding(predicate.subject, "owns", item, confidence=confidence, tense=tense)
        for item in _possessions(rest)
    ]


def _parted(subject: str, rest: str) -> list[Finding]:
    return [
        Finding(subject, "owns", item, polarity="retract", tense="present")
        for item in _possessions(rest)
    ]


HANDLERS = {
    lemma: propose_ownership
    for lemma in ("have", "own", "drive", "buy", "get", "sell", "lose", "give")
}
