"""The household's pets: "we adopted a kitten", "our dog Max".

A bare "we" stays what the precision gate makes it (the project for project work, otherwise
nothing), with one exception that is never project work: a pet the household took home or
names is the speaker's pet too, as "my dog Max" is (:mod:`.belongings`). A pet that is gone
("our dog Max passed away") forms nothing. ("My wife and I …" needs nothing here: the clause
splitter already starts a clause at "I".)
"""

from __future__ import annotations

import re
from datetime import date

from formation.deterministic.belongings import GONE
from formation.deterministic.ends import words
from formation.deterministic.findings import Finding
from formation.deterministic.nouns import PET_HEADS
from formation.deterministic.phrases import ADVERBS

_HOUSEHOLD_PET = re.compile(
    r"^[Ww]e(?:'ve| have)?\s+" + ADVERBS + r"(?:adopted|rescued|got|brought home)\s+"
    r"(?:a|an|two|three)\s+(?P<obj>[\w-]+(?:\s+[\w-]+)?)"
)
_OUR_PET = re.compile(
    r"\b[Oo]ur\s+(?:(?:new|little|old|sweet)\s+)?(?P<pet>[a-z]+)\s+(?:named\s+|called\s+)?[A-Z][a-z]"
)


def _household_pet(text: str, occurred_on: date | None) -> list[Finding]:
    match = _HOUSEHOLD_PET.match(text)
    found = words(match.group("obj")) if match else []
    pets = [w for w in found if w in PET_HEADS or w.removesuffix("s") in PET_HEADS]
    return [Finding("I", "owns", pets[0], tense="present")] if pets else []


def _our_pet(text: str, occurred_on: date | None) -> list[Finding]:
    if GONE.search(text):
        return []  # "our dog Max passed away": a pet the household no longer has
    return [
        Finding("I", "owns", match.group("pet"), tense="present")
        for match in _OUR_PET.finditer(text)
        if match.group("pet") in PET_HEADS
    ]


PROPOSERS = (_household_pet, _our_pet)
