"""A wedding told in passing: "my cousin's wedding was last weekend", "at our wedding last June".

A wedding is a life event whoever's it is, and real talk mentions it on the way to something
else ("We danced all night at my brother's wedding on Saturday"), where no "I went to …"
pattern (:mod:`.events`) reads it. Two shapes, each only when the words place it behind the
speaker (a past verb or a past time the episode's date grounds):

* someone else's wedding ("my cousin's wedding", "Jess's wedding", "my best friend's
  wedding"): the speaker was there, (I, participated_in, cousin's wedding), named with its date
  when the words ground one, as every event is (:func:`.events._dated`'s naming);
* the speaker's own ("our wedding", "my wedding day"): the speaker is married, the same belief
  "we got married" forms (:mod:`.lifeevents`: related_to spouse, facet ``spouse``).

A wedding ahead ("my sister's wedding is next month", "planning our wedding"), wished or asked
about forms nothing here: the clause's mood silences wishes and questions, and a word of the
future keeps the shape from matching at all. "Your wedding" is the other person's.
"""

from __future__ import annotations

import re
from datetime import date

from engram.formation.deterministic.dates import ground
from engram.formation.deterministic.dispatch import Reader, Triggers
from engram.formation.deterministic.findings import Finding
from engram.formation.screening import screened

__all__ = ["PROPOSERS", "TRIGGERS"]

_OWNER = (
    r"(?P<owner>(?:[Mm]y|[Oo]ur)\s+(?:(?:best|oldest|closest|old|little|big|older|younger)\s+)?"
    r"(?:friend|cousin|sister|brother|niece|nephew|aunt|uncle|colleague|coworker|co-worker"
    r"|neighbou?r|roommate|daughter|son|boss|teammate|classmate|mom|mum|dad|grandson"
    r"|granddaughter|buddy|pal)"
    r"|[A-Z][a-z]+(?:\s+and\s+[A-Z][a-z]+)?)(?:'s|\u2019s)"
)
_THEIRS = screened(r"(?<![\w'])" + _OWNER + r"\s+wedding\b")
_OURS = screened(r"\b(?:[Oo]ur|[Mm]y)\s+(?:own\s+)?wedding(?:\s+day)?\b")
_PAST = re.compile(
    r"\b(?:was|were|went|attended|danced|had|got\s+back|came\s+back|flew|drove|celebrated"
    r"|gave|made|wore|cried|met|caught|took|saw|sang|played|helped|baked|spent|enjoyed|loved"
    r"|since|ago|yesterday|last\s+(?:night|week|weekend|month|year|spring|summer|fall|autumn"
    r"|winter|mon|tue|wed|thu|fri|sat|sun)\w*)\b",
    re.IGNORECASE,
)
"""What places a wedding behind the speaker: a past verb of the clause or a past time."""
_AHEAD = re.compile(
    r"\b(?:next|upcoming|coming\s+up|tomorrow|will|'ll|gonna|going\s+to|plan\w*|prepar\w*"
    r"|getting\s+ready|can't\s+wait|cannot\s+wait|looking\s+forward|soon|is\s+in|invited"
    r"|save\s+the\s+date|if|when)\b",
    re.IGNORECASE,
)
"""A wedding ahead, hoped for or conditional: nothing of it has happened yet."""
_NOT_OWNERS = frozenset({"It", "That", "This", "There", "Here", "What", "Who", "Everyone"})


def _weddings(text: str, occurred_on: date | None) -> list[Finding]:
    if _AHEAD.search(text) or not _PAST.search(text):
        return []
    when = ground(text, occurred_on)
    dated = f" ({when})" if when else ""
    findings: list[Finding] = []
    for match in _THEIRS.finditer(text):
        owner = match.group("owner")
        if owner in _NOT_OWNERS:
            continue
        whose = re.sub(r"^(?:my|our)\s+", "", owner, flags=re.IGNORECASE)
        findings.append(Finding("I", "participated_in", f"{whose}'s wedding{dated}", tense="past"))
    if not findings and _OURS.search(text):
        findings.append(Finding("I", "related_to", "spouse", facet="spouse"))
    return findings


PROPOSERS: tuple[Reader, ...] = (_weddings,)

TRIGGERS: Triggers = {_weddings: (_THEIRS, _OURS)}
"""A wedding reader finds nothing in a clause without a wedding (:mod:`.dispatch`)."""
