"""One belief per pet: one word for it however told, and its name when the clause gives one.

People name one pet many ways in one conversation — "my dogs", "my pups", "my puppy" — and the
readers that find pets (:mod:`.pets`, :mod:`.belongings`, :mod:`.possession`) each kept the
word as told, so one dog became several ``owns`` beliefs. Here an owned pet is settled to one
word: plurals to the singular ("dogs" → "dog"), pet talk to its plain word ("pups" → "puppy",
"kitties" → "kitten"), so the told ways collapse (how many there are is not kept: "my dogs" and
"my dog" are one claim). A puppy stays a puppy: the word is the person's, and "dog" and "puppy"
remain two beliefs when both are told.

A named pet is one belief that carries its name: "a dog named Biscuit", "our cat Miso",
"Biscuit is my dog", "Miso, my cat" form (I, owns, dog) with the facet "name:Biscuit", so "what
is my dog called?" has an answer and two named dogs are two beliefs. A pet named after a
possessive ("my aunt's parrot Pip") is not the speaker's, and a clause that says the pet is gone
("passed away") names no pet the speaker has.
"""

from __future__ import annotations

import re

from engram.formation.deterministic.belongings import GONE
from engram.formation.deterministic.dispatch import ClauseTriggers
from engram.formation.deterministic.findings import Finding
from engram.formation.deterministic.nouns import PET_HEADS, closed
from engram.formation.deterministic.phrases import ADVERBS

_KIND_OF: dict[str, str] = {
    **{w: "puppy" for w in ("puppy", "puppies", "pup", "pups")},
    **{w: "dog" for w in ("doggo", "doggos", "doggy", "doggie", "doggies")},
    **{w: "kitten" for w in ("kitten", "kittens", "kitty", "kitties")},
    **{w: "bunny" for w in ("bunny", "bunnies")},
    **{w: "guinea pig" for w in ("guinea pig", "guinea pigs", "guinea-pig", "guinea-pigs")},
    **{w: "fish" for w in ("fish", "fishes")},
}
"""Plurals and pet-talk spellings to one word; a puppy stays a puppy and a kitten a kitten
(the word a person chose, and the one a reader of their memory expects to find)."""


_COUNTS = closed("two three four five several some both few couple of a an")
"""Words before a pet noun that count, not describe: "two dogs" is the speaker's dog."""


def pet_kind(word: str) -> str | None:
    """The kind of pet a word names, singular ("pups" → "dog", "two turtles" → "turtle"), or
    ``None`` when the word names no pet ("dog bed" is a thing, not a pet)."""
    found = word.lower().split()
    while len(found) > 1 and found[0] in _COUNTS:
        found = found[1:]
    word = " ".join(found)
    if word in _KIND_OF:
        return _KIND_OF[word]
    for singular in (word.removesuffix("s"), word.removesuffix("es"), word):
        if singular in PET_HEADS:
            return singular
    return None


_PET = r"(?P<pet>guinea[ -]pigs?|[a-z]+)"
_FEW_WORDS = r"(?:(?:new|little|old|sweet|two|three|rescue|baby|adopted|young|lovely)\s+)?"
_NAME = r"(?P<name>[A-Z][a-z]{1,20})\b(?!['\u2019]s\b)"
_NOT_NAMES = closed(
    """
    and but so or the this that these those he she they we it its his her our my your
    mom mum dad grandma grandpa monday tuesday wednesday thursday friday saturday sunday
    """
)
"""Capitalised words after a pet noun that are not its name ("my dog And …" at a sentence
break, "my cat Sunday morning")."""

_MY_PET_NAME = re.compile(
    r"\b(?:[Mm]y|[Oo]ur)\s+" + _FEW_WORDS + _PET + r",?\s+(?:(?:named|called)\s+)?" + _NAME
)
""""my dog Rex", "our cat, Miso", "my puppy named Nugget"."""
_HAVE_A_PET_NAMED = re.compile(
    r"^(?:I|[Ww]e)(?:'ve| have)?\s+"
    + ADVERBS
    + r"(?:have|has|got|own|adopted|rescued|brought home|took in|welcomed)\s+(?:a|an|two|three)\s+"
    + _FEW_WORDS
    + _PET
    + r",?\s+(?:named|called)\s+"
    + _NAME
)
""""I have a dog named Biscuit", "we adopted a kitten called Pip": the clause opens with the
speaker or the household taking the pet; "my neighbour has a dog named Rex" does not."""
_NAME_IS_MY_PET = re.compile(
    r"^" + _NAME + r"\s+is\s+(?:my|our)\s+" + _FEW_WORDS + _PET + r"\b(?!['\u2019]s\b)"
)
""""Biscuit is my dog"; "Pip is my aunt's parrot" stops at the possessive."""
_NAME_MY_PET = re.compile(r"\b" + _NAME + r",\s+(?:my|our)\s+" + _FEW_WORDS + _PET + r"\b")
_HAVE_PETS_LISTED = re.compile(
    r"^(?:I|[Ww]e)(?:'ve| have)?\s+"
    + ADVERBS
    + r"(?:have|got|own|adopted|rescued|brought home|took in|welcomed)\s+(?:two|three|four)\s+"
    + _FEW_WORDS
    + _PET
    + r",?\s+(?:(?:named|called)\s+)?"
    + _NAME
    + r"(?=\s*(?:,|and\b|&))"
)
""""We have two cats, Miso and Tofu": pets counted, then named."""
_MORE_NAMES = re.compile(r"(?:\s*,\s*(?:and\s+|&\s+)?|\s+(?:and|&)\s+)" + _NAME)
"""", Pixie", " and Pixie": the next name of a list after a plural pet word."""
""""Oscar, my guinea pig, …"."""
_NAMING: tuple[re.Pattern[str], ...] = (
    _MY_PET_NAME,
    _HAVE_A_PET_NAMED,
    _NAME_IS_MY_PET,
    _NAME_MY_PET,
    _HAVE_PETS_LISTED,
)


_PET_WORD = re.compile(
    "|".join(
        re.escape(word)
        for word in sorted(
            {*_KIND_OF, *PET_HEADS, *(h + "s" for h in PET_HEADS), *(h + "es" for h in PET_HEADS)},
            key=len,
            reverse=True,
        )
    )
)
"""Every word :func:`pet_kind` takes for a pet: a clause that names a pet of the speaker's has
one (:data:`TRIGGERS`)."""


def named_pets(text: str) -> list[tuple[str, str]]:
    """Every (name, kind) of a pet of the speaker's the clause names, in order, once each (the
    cheap test first: a clause without a capital letter names nobody)."""
    if text.islower() or GONE.search(text):
        return []  # "our dog Max passed away": no pet the speaker has now
    found: list[tuple[str, str]] = []
    for pattern in _NAMING:
        for match in pattern.finditer(text):
            kind = pet_kind(match.group("pet"))
            for name in _names(match, text):
                if kind is None or name.lower() in _NOT_NAMES or (name, kind) in found:
                    continue
                found.append((name, kind))
    return found


def _names(match: re.Match[str], text: str) -> list[str]:
    """The match's name, and after a plural pet word ("our dogs Pepper and Pixie") the names
    listed after it; a singular one names one pet ("my dog Rex and Ana" names Rex alone)."""
    names = [match.group("name")]
    pet = match.group("pet").lower()
    if pet_kind(pet) == pet and pet not in {"fish", "sheep"}:
        return names  # singular: one name
    at = match.end()
    while (more := _MORE_NAMES.match(text, at)) is not None:
        names.append(more.group("name"))
        at = more.end()
    return names


def settle(finding: Finding, named: list[tuple[str, str]]) -> list[Finding]:
    """The finding with an owned pet settled to one word ("pups" → "puppy"); a pet the clause
    names carries its name as the facet ("name:Biscuit"), one belief for each named pet."""
    kind = pet_kind(finding.object) if _owned(finding) else None
    if kind is None:
        return [finding]
    names = [name for name, k in named if k == kind] if finding.polarity is None else []
    facets: list[str | None] = [f"name:{name}" for name in names] or [finding.facet]
    return [_with(finding, kind, facet) for facet in facets]


def unmet(named: list[tuple[str, str]], findings: list[Finding]) -> list[Finding]:
    """(I, owns, <kind>) with facet "name:<name>" for a named pet no finding has told."""
    have = {(f.object, f.facet) for f in findings if _owned(f)}
    return [
        Finding("I", "owns", kind, facet=f"name:{name}", tense="present")
        for name, kind in named
        if (kind, f"name:{name}") not in have
    ]


def _owned(finding: Finding) -> bool:
    return finding.relation == "owns" and finding.subject == "I"


def _with(finding: Finding, obj: str, facet: str | None) -> Finding:
    return Finding(
        finding.subject,
        finding.relation,
        obj,
        facet,
        finding.confidence,
        finding.polarity,
        finding.tense,
    )


TRIGGERS: ClauseTriggers = {named_pets: (_PET_WORD,)}
""":func:`named_pets` finds a pet only where :func:`pet_kind` takes its word, so only where
``_PET_WORD`` matches (:mod:`.dispatch` skips it otherwise)."""
