"""The speaker's pets as people mention them: "I took my turtles out", "we adopted a kitten".

A pet is rarely introduced; it turns up in a story: "I took my turtles to the beach", "I just
adopted this cute pup from a shelter". "my <pet>" is the speaker's pet wherever it stands
(:mod:`.belongings` needs a name after it), unless the clause says the pet is gone or was a
childhood one. A bare "we" stays what the precision gate makes it (the project for project
work, otherwise nothing), with one exception that is never project work: a pet the household
took home or names ("we adopted a kitten", "our dog Max") is the speaker's pet too. ("My wife
and I …" needs nothing here: the clause splitter already starts a clause at "I".)
"""

from __future__ import annotations

import re
from datetime import date

from engram.formation.deterministic.belongings import GONE
from engram.formation.deterministic.dispatch import Reader, Triggers
from engram.formation.deterministic.ends import words
from engram.formation.deterministic.findings import Finding
from engram.formation.deterministic.nouns import PET_HEADS
from engram.formation.deterministic.phrases import ADVERBS

_HOUSEHOLD_PET = re.compile(
    r"^[Ww]e(?:'ve| have)?\s+" + ADVERBS + r"(?:adopted|rescued|got|brought home)\s+"
    r"(?:a|an|two|three)\s+(?P<obj>[\w-]+(?:\s+[\w-]+)?)"
)
_ADOPTED_THIS = re.compile(
    r"\bI(?:'ve| have)?\s+"
    + ADVERBS
    + r"(?:adopted|rescued|brought home)\s+(?:this|a|an|my|our)\s+"
    r"(?P<obj>[\w-]+(?:\s+[\w-]+){0,2})"
)
_MY_PETS = re.compile(
    r"\b[Mm]y\s+(?:(?:two|three|little|sweet|new)\s+)?(?P<pet>[a-z]+)"
    r"(?=\s*(?:[,.!?;:)]|$)|\s+(?:[A-Z]|is|are|was|were|has|have|had|and|to|out|for|at|in|on|so"
    r"|always|just|love|loves|because|who|that|when|with|from|get|gets|got|make|makes|keep|keeps"
    r"|still|now|cheer|cheers|too|every|again|grow|like|likes)\b)"
)
"""A pet noun that ends the phrase: "my dog is", "my turtles to the beach" — not "my horse
painting", where the pet only says what the painting shows."""
_CHILDHOOD = re.compile(
    r"\b(?:childhood|as a (?:kid|child)|when I was|growing up|used to have)\b", re.IGNORECASE
)
_OUR_PET = re.compile(
    r"\b[Oo]ur\s+(?:(?:new|little|old|sweet)\s+)?(?P<pet>[a-z]+)\s+(?:named\s+|called\s+)?[A-Z][a-z]"
)


def _household_pet(text: str, occurred_on: date | None) -> list[Finding]:
    match = _HOUSEHOLD_PET.match(text)
    found = words(match.group("obj")) if match else []
    pets = [p for w in found if (p := _pet(w))]
    return [Finding("I", "owns", pets[0], tense="present")] if pets else []


def _our_pet(text: str, occurred_on: date | None) -> list[Finding]:
    pets = [m.group("pet") for m in _OUR_PET.finditer(text) if m.group("pet") in PET_HEADS]
    if not pets or GONE.search(text):
        return []  # "our dog Max passed away": a pet the household no longer has
    return [Finding("I", "owns", pet, tense="present") for pet in pets]


def _pet(word: str) -> str | None:
    """The pet noun as told ("turtles"), when it or its singular is a pet."""
    return word if word in PET_HEADS or word.removesuffix("s") in PET_HEADS else None


def _adopted_this(text: str, occurred_on: date | None) -> list[Finding]:
    """ "I just adopted this cute pup from a shelter": the pet, whatever the determiner."""
    match = _ADOPTED_THIS.search(text)
    pets = [p for w in words(match.group("obj")) if (p := _pet(w))] if match else []
    return [Finding("I", "owns", pets[-1], tense="present")] if pets else []


def _my_pets(text: str, occurred_on: date | None) -> list[Finding]:
    """ "I took my turtles out for a walk": "my" and a pet noun, unless gone or long ago."""
    pets = {p for m in _MY_PETS.finditer(text) if (p := _pet(m.group("pet")))}
    if not pets or GONE.search(text) or _CHILDHOOD.search(text):
        return []  # the cheap search first: most clauses name no pet
    return [Finding("I", "owns", pet, tense="present") for pet in sorted(pets)]


PROPOSERS: tuple[Reader, ...] = (_household_pet, _our_pet, _adopted_this, _my_pets)

TRIGGERS: Triggers = {
    _household_pet: (_HOUSEHOLD_PET,),
    _our_pet: (_OUR_PET,),
    _adopted_this: (_ADOPTED_THIS,),
    _my_pets: (_MY_PETS,),
}
"""For each reader, the patterns one of which must match a clause for it to find anything
(:mod:`.dispatch` skips it otherwise)."""
