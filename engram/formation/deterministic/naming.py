"""A name told after the relative it names: "our one-year-old is so cute, his name is Kyle".

"My son" forms the speaker's son unnamed, (I, related_to, son, facet son), until a name is told
(:mod:`.relationships`). When the same clause, or the clause right after it, goes on with
"his name is Kyle", the name is that relative's: (I, related_to, Kyle, facet son). Three things
must hold, or the name is nobody's the speaker told:

* the pronoun fits the relative: "his" a son, a husband or a child, "her" a daughter, a wife or
  a child, "their" anyone;
* no one and nothing else comes between the relative and the name, no person word and no
  determiner ("my husband has a new colleague, his name is Kyle" names the colleague, "my wife
  hired an assistant, her name is Dora" the assistant);
* the name is a name (capitalised, not a month, a weekday or a greeting).
"""

from __future__ import annotations

import re

from engram.formation.deterministic.nouns import closed

__all__ = ["fits", "told_name"]

_TOLD = re.compile(
    r"\b(?P<whose>[Hh]is|[Hh]er|[Tt]heir)\s+name(?:['\u2019]s|\s+is)\s+(?P<name>[A-Z][a-z]{1,20})\b"
)
_MALE = closed("son husband boyfriend brother father dad grandfather grandpa uncle nephew fiancé")
_FEMALE = closed(
    "daughter wife girlfriend sister mother mom mum grandmother grandma aunt niece fiancée"
)
_OTHER_PEOPLE = closed(
    """
    guy man woman lady boy girl kid someone somebody person people teacher coach doctor nurse
    neighbour neighbor colleague coworker friend friends boss dude buddy mate classmate student
    client customer stranger cousin uncle aunt brother sister mother father mom dad grandma
    grandpa grandmother grandfather nephew niece
    """
)
_ANOTHER_THING = closed("a an the this that these those some another new his her their its")
"""A determiner between the relative and the name brings in someone or something else ("my
wife hired a new assistant, her name is Dora"): the name may be theirs."""
_SAYING_WHAT = closed("is was are were s such quite")
""""is a handful", "is such a sweetheart": a determiner after the copula says what the
relative is, it brings in no one else."""
_NOT_NAMES = closed(
    """
    january february march april may june july august september october november december
    monday tuesday wednesday thursday friday saturday sunday hey hi hello thanks the and but
    """
)
_WORD = re.compile(r"[a-z]+")


def told_name(text: str) -> re.Match[str] | None:
    """The "his name is Kyle" of ``text``, if it tells one."""
    match = _TOLD.search(text)
    if match is None or match.group("name").lower() in _NOT_NAMES:
        return None
    return match


def fits(kin: str, told: re.Match[str], between: str) -> bool:
    """Whether ``told`` names the relative ``kin``, given the words ``between`` them."""
    whose = told.group("whose").lower()
    kin = kin.lower()
    if (whose == "his" and kin in _FEMALE) or (whose == "her" and kin in _MALE):
        return False
    found = _WORD.findall(between.lower())
    for before, word in zip(["", *found], found, strict=False):
        if word in _OTHER_PEOPLE or (word in _ANOTHER_THING and before not in _SAYING_WHAT):
            return False
    return True
