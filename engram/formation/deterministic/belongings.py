"""Possessions and pets told in passing: "I adopted a kitten", "my dog Rufus", "my new hatchback".

A pet named beside "my" is the speaker's; "my new/own X" is a possession only when X is on the
closed list and the clause is not a plan ("I'm going to open my own bakery" owns nothing).
"""

from __future__ import annotations

import re
from datetime import date

from engram.formation.deterministic.dispatch import Reader, Triggers
from engram.formation.deterministic.ends import words
from engram.formation.deterministic.findings import Finding
from engram.formation.deterministic.nouns import OWNABLE_HEADS, PET_HEADS
from engram.formation.deterministic.phrases import ADVERBS, PLANNED
from engram.formation.screening import screened

_ADOPTED = re.compile(
    r"^I\s+" + ADVERBS + r"(?:adopted|rescued|got|brought home)\s+(?:a|an|two|three)\s+"
    r"(?P<obj>[\w-]+(?:\s+[\w-]+)?)"
)
_MY_NEW = screened(r"\b[Mm]y\s+(?:(?:brand[- ])?new|own)\s+(?P<obj>[\w-]+(?:\s+[\w-]+){0,2})")
_NAME_MY_PET = screened(r"\b[A-Z][a-z]+,\s+my\s+(?P<pet>guinea pig|[a-z]+)\b")
_MY_PET = screened(
    r"\b[Mm]y\s+(?:(?:new|little|old|sweet)\s+)?(?P<pet>[a-z]+)\s+(?:named\s+|called\s+)?[A-Z][a-z]"
)


def _adopted(text: str, occurred_on: date | None) -> list[Finding]:
    match = _ADOPTED.match(text)
    if match is None:
        return []
    pets = [word for word in words(match.group("obj")) if word in PET_HEADS]
    return [Finding("I", "owns", pets[0], tense="present")] if pets else []


def _my_new(text: str, occurred_on: date | None) -> list[Finding]:
    """ "my new hatchback", "my own studio": a possession, unless the clause is a plan."""
    if _MY_NEW.search(text) is None:
        return []  # nothing new or own named (the cheap test first)
    if PLANNED.search(text):
        return []
    findings: list[Finding] = []
    for match in _MY_NEW.finditer(text):
        found = words(match.group("obj"))
        for size in (3, 2, 1):
            if len(found) >= size and found[size - 1] in OWNABLE_HEADS:
                findings.append(Finding("I", "owns", " ".join(found[:size]), tense="present"))
                break
    return findings


def _my_pet(text: str, occurred_on: date | None) -> list[Finding]:
    """ "my dog Max", "my cat named Luna": the speaker has the pet (the name is the pet's)."""
    if "my" not in text and "My" not in text:
        return []  # both pet patterns name "my" (the cheap test first)
    if _GONE.search(text):
        return []  # "my dog Max passed away": a pet the speaker no longer has
    matches = [*_MY_PET.finditer(text), *_NAME_MY_PET.finditer(text)]
    return [
        Finding("I", "owns", match.group("pet"), tense="present")
        for match in matches
        if match.group("pet") in PET_HEADS
    ]


_GONE = screened(
    r"\b(?:passed away|passed on|died|put down|put to sleep|lost|miss|missing|late|rest in peace"
    r"|rip|used to|had to give)\b",
    re.IGNORECASE,
)

GONE = _GONE
"""Words that say a pet is gone: shared with :mod:`.together` for "our dog Max"."""

PROPOSERS: tuple[Reader, ...] = (_adopted, _my_new, _my_pet)

TRIGGERS: Triggers = {
    _adopted: (_ADOPTED,),
    _my_new: (_MY_NEW,),
    _my_pet: (_MY_PET, _NAME_MY_PET),
}
"""For each reader, the patterns one of which must match a clause for it to find anything
(:mod:`.dispatch` skips it otherwise)."""
