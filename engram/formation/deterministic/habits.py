"""Habits and routines: what the speaker does regularly, how often, and since when.

"Every weekend I go climbing", "I usually swim before work", "I bake on Sundays": a routine is
present participation in a pastime, (I, participated_in, climbing), with how often as its facet
("every weekend"). "I've been knitting for three years" is the same pastime with since when,
grounded in the episode's date ("since 2021"). The pastime must be a known one — a pastime gerund ("go hiking"), a sport played ("play tennis"),
an activity done ("do yoga") or a pastime verb ("swim", "bake") — so "I usually wait" or "I go
to work every day" form nothing; a habit that is over ("I used to swim every morning") or
wished for ("I'd love to swim every morning", silenced by the clause's mood) is no routine of
now.
"""

from __future__ import annotations

import re
from datetime import date

from engram.formation.deterministic.dispatch import ClauseTriggers
from engram.formation.deterministic.findings import WEAK_CONFIDENCE, Finding
from engram.formation.deterministic.nouns import ACTIVITY_HEADS, HOBBY_GERUNDS, SPORTS, closed
from engram.formation.screening import screened

_PASTIMES = HOBBY_GERUNDS | closed("reading traveling travelling sewing walking")
_DAYS = r"monday|tuesday|wednesday|thursday|friday|saturday|sunday"
_FREQUENCY = (
    r"every\s+(?:single\s+|other\s+)?(?:day|morning|evening|night|week|weekend|month|summer"
    r"|winter|spring|fall|autumn|" + _DAYS + r")"
    r"|(?:once|twice|three times|four times|a few times|a couple of times)\s+(?:a|per)\s+"
    r"(?:day|week|month|year)"
    r"|on\s+(?:" + _DAYS.replace("|", "s|") + r"s|weekends)"
    r"|most\s+(?:days|mornings|evenings|weekends|nights)"
    r"|daily|weekly"
)
_HOW_OFTEN = screened(r"\b(?P<often>" + _FREQUENCY + r")\b", re.IGNORECASE)
_USUALLY = r"(?:(?:usually|often|always|regularly|normally|typically|still)\s+)?"
_ROUTINE = screened(
    r"^(?:(?:"
    + _FREQUENCY
    + r"),?\s+)?I\s+"
    + _USUALLY
    + r"(?:(?P<go>go)\s+(?P<gerund>[a-z]+ing)\b"
    r"|(?P<play>play)\s+(?P<sport>[a-z]+)\b"
    r"|(?P<do>do)\s+(?P<activity>[a-z]+(?:\s+chi)?)\b"
    r"|(?P<verb>[a-z]+)\b)",
    re.IGNORECASE,
)
""""Every weekend I go climbing", "I usually swim": the speaker and what they do, opening the
clause (a leading frequency allowed)."""
_HABITUAL = screened(r"\b(?:usually|often|always|regularly|normally|typically)\b", re.IGNORECASE)
_OVER = screened(r"\b(?:used to|would always|anymore|any more|no longer)\b", re.IGNORECASE)
_SINCE = screened(
    r"^I(?:'ve| have)\s+been\s+(?P<gerund>[a-z]+ing)\b.*?\bfor\s+(?:about\s+|almost\s+|over\s+)?"
    r"(?P<count>\d+|a|one|two|three|four|five|six|seven|eight|nine|ten|a few|a couple of)\s+"
    r"(?P<unit>years?|months?)\b",
    re.IGNORECASE,
)
""""I've been knitting for three years" ("I started kayaking two years ago" is :mod:`.activities`'
``learning``, and stays one belief)."""
_NUMBERS = {
    "a": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7,
    "eight": 8, "nine": 9, "ten": 10, "a few": 3, "a couple of": 2,
}  # fmt: skip


def pastime(verb: str) -> str | None:
    """The pastime gerund of a verb ("bake" → "baking", "swim" → "swimming", "hiking" →
    "hiking"), or ``None`` when the verb names no pastime on the closed list."""
    verb = verb.lower()
    stem = verb.removesuffix("ing")
    for gerund in (verb, stem + "ing", verb + "ing", verb[:-1] + "ing", verb + verb[-1:] + "ing"):
        if gerund in _PASTIMES:
            return gerund
    return None


def propose_habits(text: str, occurred_on: date | None) -> list[Finding]:
    """The clause's routine with how often, or its pastime with since when."""
    if _OVER.search(text):
        return []
    since = _SINCE.search(text)
    if since is not None:
        return _since(since, occurred_on)
    often = _HOW_OFTEN.search(text)
    if often is None and not _HABITUAL.search(text):
        return []
    routine = _ROUTINE.match(text)
    activity = _activity(routine) if routine is not None else None
    if activity is None:
        return []
    facet = " ".join(often.group("often").lower().split()) if often else None
    return [Finding("I", "participated_in", activity, facet=facet, tense="present")]


TRIGGERS: ClauseTriggers = {propose_habits: (_SINCE, _HOW_OFTEN, _HABITUAL)}
"""A routine needs how long or how often: :func:`propose_habits` finds nothing in a clause none
of these patterns matches (:mod:`.dispatch` skips it)."""


def _activity(match: re.Match[str]) -> str | None:
    if match.group("go"):
        return pastime(match.group("gerund"))
    if match.group("play"):
        sport = match.group("sport").lower()
        return sport if sport in SPORTS else None
    if match.group("do"):
        activity = match.group("activity").lower()
        return activity if activity in ACTIVITY_HEADS else None
    return pastime(match.group("verb"))


def _since(match: re.Match[str], occurred_on: date | None) -> list[Finding]:
    gerund = pastime(match.group("gerund"))
    if gerund is None:
        return []
    count, unit = match.group("count").lower(), match.group("unit").lower().removesuffix("s")
    facet = _since_when(occurred_on, int(count) if count.isdigit() else _NUMBERS[count], unit)
    return [
        Finding(
            "I", "participated_in", gerund, facet=facet, confidence=WEAK_CONFIDENCE, tense="present"
        )
    ]


def _since_when(anchor: date | None, number: int, unit: str) -> str | None:
    """ "since 2021" for three years before a 2024 episode; "since 2024-02" for three months."""
    if anchor is None:
        return None
    if unit == "year":
        return f"since {anchor.year - number}"
    months = anchor.year * 12 + anchor.month - 1 - number
    return f"since {months // 12}-{months % 12 + 1:02d}"
