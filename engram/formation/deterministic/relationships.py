"""Relationships and "my …" attributes: relatives, colleagues, managers, "my name is …".

These patterns are not anchored at the clause start: "I live with my sister Anna" states a
relation wherever it appears. The relation mappings are fixed:

* a relative or friend: (I, related_to, Anna, facet "sister")
* a colleague: (I, works_with, Bo)
* a manager: (Bo, manages, I); a direct report: (I, manages, Bo)
"""

from __future__ import annotations

import re
from collections.abc import Callable

from engram.formation.deterministic.attributes import languages, organisation, place
from engram.formation.deterministic.copula import TIMEZONE
from engram.formation.deterministic.dispatch import ClauseTriggers
from engram.formation.deterministic.facets import facet_for
from engram.formation.deterministic.findings import Finding
from engram.formation.deterministic.lexicon import (
    COLLEAGUE_WORDS,
    MANAGER_WORDS,
    RELATIVE_FACETS,
    RELATIVE_WORDS,
    REPORT_WORDS,
)
from engram.formation.deterministic.naming import fits, told_name
from engram.formation.deterministic.nouns import closed
from engram.formation.deterministic.predicate import Predicate
from engram.formation.deterministic.terms import (
    leading_name,
    name_list,
    object_list,
    object_phrase,
)
from engram.formation.screening import NeedleIndex, Screened, screened

_KIN = "|".join(re.escape(w) for w in sorted(RELATIVE_WORDS, key=len, reverse=True))
KIN_PATTERN = _KIN
"""Every relative, colleague or manager word, longest first, as one alternation."""
_IS = r"(?:is|'s|are)(?P<neg>\s+not|n't|\s+no longer)?"
_ORDER = (
    r"(?:(?:older|younger|little|big|baby|twin|eldest|oldest|youngest|two|three|four|step"
    r"|half|(?:\d{1,2}|\w+)-year-old)\s+)?"
)
""""my older sister Marta", "my two sisters, Marta and Lena": words that say which relative,
never whether they are one still ("late", "ex", "former" and "future" are not among them)."""
_APPOSITIVE = screened(
    r"\b[Mm]y\s+"
    + _ORDER
    + r"(?P<kin>"
    + _KIN
    + r"),?\s+(?:(?:named|called)\s+)?(?P<names>[^\W\d_].*)$"
)
_KIN_IS = screened(
    r"\b[Mm]y\s+"
    + _ORDER
    + r"(?P<kin>"
    + _KIN
    + r")(?:'s\s+name\s+is|\s+"
    + _IS
    + r"(?:\s+(?:called|named))?)\s+(?P<names>[^\W\d_].*)$"
)
_IS_MY_KIN = re.compile(
    r"^(?P<names>[A-Z][\w'\u2019-]*(?:\s+[A-Z][\w'\u2019-]*)?)\s+"
    + _IS
    + r"\s+my\s+(?P<kin>"
    + _KIN
    + r")\b(?!['\u2019]s\b)"
)
""""Pip is my sister": a relative named. "Pip is my aunt's parrot" is the aunt's parrot, not a
kinship of the speaker, so a possessive after the kin word stops the match."""


_OUR_CHILD = screened(
    r"\b[Oo]ur\s+(?:(?:little|baby|youngest|oldest|eldest|newborn)\s+)?(?P<kin>son|daughter"
    r"|sons|daughters|kids|children)\s*,?\s+(?:(?:named|called)\s+)?(?P<names>[A-Z].*)$"
)
""""Our son Theo": the household's child is the speaker's, as "my son Theo" is."""
_MY_KIN = screened(
    r"(?<!\w)(?P<names>[A-Z][a-z]+(?:\s+[A-Z][a-z]+)?),\s+(?:my|our)\s+(?P<kin>" + _KIN + r")\s*,"
)
""""Ana, my sister, …": the name, then the kin word set off by commas on both sides (a lone
comma is how a greeting ends, "Thanks Ana, my sister is …", and forms nothing)."""
_GREETING = re.compile(
    r"\b(?:hey|hi|hello|thanks|thank you|yes|yeah|oh|wow|sorry|congrats|dear|bye|cheers)\W*$",
    re.IGNORECASE,
)
_OUR_CHILD = screened(
    r"\b[Oo]ur\s+(?:(?:little|baby|youngest|oldest|eldest|newborn)\s+)?(?P<kin>son|daughter"
    r"|sons|daughters|kids|children)\s*,?\s+(?:(?:named|called)\s+)?(?P<names>[A-Z].*)$"
)
""""Our son Theo": the household's child is the speaker's, as "my son Theo" is."""
_HOUSEHOLD_KIN = closed(
    """
    wife husband partner boyfriend girlfriend fiance fiancé fiancee fiancée son sons daughter
    daughters kids children sister sisters brother brothers
    """
)
_MY_KIN = screened(
    r"\b[Mm]y\s+(?:(?:two|three|four|little|baby|younger|older|big|twin|youngest|oldest|eldest)\s+)?"
    r"(?P<kin>wife|husband|partner|boyfriend|girlfriend|fianc[eé]e?|sons?|daughters?|kids"
    r"|children)\b(?!\s*['\u2019]s\b)"
    r"|\b[Oo]ur\s+(?:(?:two|three|four|little|youngest|oldest|eldest)\s+)?"
    r"(?P<ours>sons?|daughters?)\b(?!\s*['\u2019]s\b)"
    r"|\b(?:[Mm]y|[Oo]ur)\s+(?P<aged>(?:\d{1,2}|one|two|three|four|five|six|seven|eight|nine|ten"
    r"|eleven|twelve|\w+teen)[- ]year[- ]old)\b(?!\s+(?:\w+\s+)?(?:dog|cat|car|laptop|house|van"
    r"|truck|bike|puppy|kitten|tree|computer|phone|daughter|son|boy|girl)s?\b)"
)
_THE_MISSUS = screened(r"\b[Tt]he\s+(?P<kin>missus|missis|wifey|hubby|other\s+half)\b")
""""me, the missus and the kids": the speaker's own partner, told the familiar way."""
_MISSUS_KIN = {"missus": "wife", "missis": "wife", "wifey": "wife", "hubby": "husband"}
_AND_KIDS = screened(
    r"\b[Mm]y\s+(?:wife|husband|partner|spouse)\s+(?:and|&)\s+(?:(?:the|our|my)\s+)?"
    r"(?:(?:two|three|four)\s+)?(?P<also>kids|children)\b"
)
""""my wife and kids": the kids are the speaker's too."""
""""my wife", "my two kids": the speaker has a partner or children. Parents and grandparents
are left out (everyone has them: no fact); siblings too, which real talk mentions in passing in
stories about them ("my brother adopted a cat") and which form once named; and so are relatives
qualified as gone or not yet ("my late husband", "my future wife", "my ex"), which the words
before the kin show."""
_HAVE_KIN = screened(
    r"\bI\s+(?:have|'ve got|have got)\s+(?:a|an|one|two|three|four|five)\s+"
    r"(?:(?:little|young|grown|older|younger|teenage)\s+)?"
    r"(?P<kin>kids|children|sons?|daughters?)\b"
)
""""I have two kids": the speaker has children ("I don't have kids" does not match)."""
_HAVE_KIN_NAMED = screened(
    r"\bI\s+(?:have|'ve got|have got)\s+(?:a|an)\s+(?:(?:little|young|baby|teenage|grown)\s+)?"
    r"(?P<kin>son|daughter|brother|sister)\s*,?\s+(?:(?:named|called)\s+)?(?P<names>[A-Z].*)$"
)
""""I have a son named Leo", "I have a sister, Mia": a relative with a name."""
_NOT_YET_OR_GONE = screened(
    r"\b(?:late|ex|ex-|former|future|dream|imaginary|passed|died|lost|would|someday|one day)\b",
    re.IGNORECASE,
)
_ENGAGED_OR_MARRIED = screened(
    r"\bI(?:'ve| have)?\s+(?:just\s+|finally\s+|recently\s+)?(?:got\s+|am\s+|'m\s+|was\s+)?"
    r"(?P<event>engaged|married)\s+(?:to\s+)?(?P<names>[A-Z][a-z]+)\b"
)
""""I got engaged to Tom", "I married Sam": a partner named, with the step they took
("fiancé", "spouse"). ("Tom and I got married" is cut at "I" by the clause splitter and forms
nothing.)"""


def relation_to(kin: str, name: str, *, polarity: str | None = None) -> Finding:
    """The claim "my <kin> <name>" makes, by the fixed mapping above."""
    kin = kin.lower()
    if kin in MANAGER_WORDS:
        return Finding(name, "manages", "I", polarity=polarity)
    if kin in REPORT_WORDS:
        return Finding("I", "manages", name, polarity=polarity)
    if kin in COLLEAGUE_WORDS:
        return Finding("I", "works_with", name, polarity=polarity)
    return Finding("I", "related_to", name, facet=RELATIVE_FACETS[kin], polarity=polarity)


def _negation(match: re.Match[str]) -> str | None:
    neg = (match.group("neg") or "").strip()
    if not neg:
        return None
    return "retract" if neg == "no longer" else "deny"


def propose_relatives(text: str) -> list[Finding]:
    """Every "my <relative> <Name>" and "my <relative> is <Name>" in one clause."""
    findings: list[Finding] = []
    for pattern in (_KIN_IS, _APPOSITIVE):
        for match in pattern.finditer(text):
            polarity = _negation(match) if pattern is _KIN_IS else None
            for name in name_list(match.group("names")):
                findings.append(relation_to(match.group("kin"), name, polarity=polarity))
    start = _IS_MY_KIN.match(text)
    if start is not None:
        findings.append(
            relation_to(start.group("kin"), start.group("names"), polarity=_negation(start))
        )
    for match in (*_OUR_CHILD.finditer(text), *_HAVE_KIN_NAMED.finditer(text)):
        findings += [relation_to(match.group("kin"), n) for n in name_list(match.group("names"))]
    findings += _partnered(text)
    named = {f.facet for f in findings if f.relation == "related_to"}
    return findings + [f for f in propose_household(text) if f.facet not in named]


def _partnered(text: str) -> list[Finding]:
    """ "I got engaged to Tom" is (I, related_to, Tom, facet fiancé); "married" is spouse."""
    match = _ENGAGED_OR_MARRIED.search(text)
    if match is None:
        return []
    name, event = match.group("names"), match.group("event").lower()
    if name.lower() in _NOT_NAMES:
        return []
    return [Finding("I", "related_to", name, facet="fiancé" if event == "engaged" else "spouse")]


_NOT_NAMES = closed("in on at last this next so very really happily recently my the a")


def propose_household(text: str) -> list[Finding]:
    """ "my wife", "my kids": the speaker has a partner or children, as one belief per kind,
    (I, related_to, <kin>, facet <kin>) until a name is told."""
    findings: list[Finding] = []
    for match in (
        *_MY_KIN.finditer(text),
        *_AND_KIDS.finditer(text),
        *_HAVE_KIN.finditer(text),
        *_THE_MISSUS.finditer(text),
    ):
        before = text[max(0, match.start() - 24) : match.start()]
        if _NOT_YET_OR_GONE.search(before) or _NOT_YET_OR_GONE.search(match.group()):
            continue
        facet = _household_facet(match)
        if facet is not None and facet not in {f.facet for f in findings}:
            findings.append(
                Finding("I", "related_to", _named_after(text, match, facet), facet=facet)
            )
    return findings


def _named_after(text: str, match: re.Match[str], facet: str) -> str:
    """The relative's name when the clause goes on to tell it ("our one-year-old is so cute,
    his name is Kyle": :mod:`.naming`), else the kin word itself."""
    rest = text[match.end() :]
    told = told_name(rest)
    if told is None or not fits(facet, told, rest[: told.start()]):
        return facet
    return told.group("name")


def _household_facet(match: re.Match[str]) -> str | None:
    """The kin a household match names: its word, "our son" as "my son", "our one-year-old"
    and "my wife and kids" as a child. Not "our kids": "our kids deserve better schools" is
    everyone's."""
    groups = match.groupdict()
    if groups.get("aged") or groups.get("also"):
        return "child"
    word = (groups.get("kin") or groups.get("ours") or "").lower()
    if " " in word:  # "the other half"
        return "partner"
    return RELATIVE_FACETS.get(_MISSUS_KIN.get(word, word))


Attribute = Callable[[re.Match[str]], list[Finding]]


def _single(relation: str, clean: Callable[[str], str | None]) -> Attribute:
    def attribute(match: re.Match[str]) -> list[Finding]:
        value = clean(match.group("value"))
        return [Finding("I", relation, value, polarity=_negation(match))] if value else []

    return attribute


def _favourite(match: re.Match[str]) -> list[Finding]:
    value = object_phrase(match.group("value"))
    category = match.group("category").lower()
    facet = facet_for(value) or facet_for(category) or "topic:" + " ".join(category.split())
    return [Finding("I", "prefers", value, facet=facet, polarity=_negation(match))]


def _native(match: re.Match[str]) -> list[Finding]:
    return [
        Finding("I", "speaks", lang, polarity=_negation(match))
        for lang in languages(match.group("value"))
    ]


def _contact(value: str) -> str | None:
    token = value.split()[0].rstrip(".,;!?") if value.split() else ""
    return token or None


_ATTRIBUTES: tuple[tuple[Screened, Attribute], ...] = tuple(
    (screened(pattern), handler)
    for pattern, handler in (
        (
            r"\b[Mm]y\s+(?:first\s+|full\s+)?name\s+" + _IS + r"\s+(?P<value>.+)$",
            _single("has_name", leading_name),
        ),
        (
            r"\b(?:[Cc]all me|[Ii]ch heiße|[Mm]e llamo|[Jj]e m'appelle)(?P<neg>)\s+(?P<value>.+)$",
            _single("has_name", leading_name),
        ),
        (
            r"\b[Mm]y\s+(?:time\s?zone|tz)\s+" + _IS + r"\s+(?P<value>" + TIMEZONE + r")",
            _single("has_timezone", lambda v: v),
        ),
        (
            r"\b[Mm]y\s+(?:job title|title|role|job|position)\s+"
            + _IS
            + r"\s+(?:a\s+|an\s+)?(?P<value>.+)$",
            _single("has_role", object_phrase),
        ),
        (
            r"\b[Mm]y\s+(?:email|e-mail|email address|phone number|phone|mobile)\s+"
            + _IS
            + r"\s+(?P<value>\S+.*)$",
            _single("has_contact", _contact),
        ),
        (
            r"\b[Mm]y\s+(?:all-time\s+)?favou?rite\s+(?P<category>[\w -]+?)\s+"
            + _IS
            + r"\s+(?P<value>.+)$",
            _favourite,
        ),
        (
            r"\b[Mm]y\s+(?:home|house|apartment|flat|place)\s+" + _IS + r"\s+in\s+(?P<value>.+)$",
            _single("lives_in", place),
        ),
        (
            r"\b[Mm]y\s+(?:company|employer)\s+" + _IS + r"\s+(?P<value>.+)$",
            _single("works_at", organisation),
        ),
        (
            r"\b[Mm]y\s+(?:native|first|mother)\s+(?:language|tongue)\s+"
            + _IS
            + r"\s+(?P<value>.+)$",
            _native,
        ),
        (  # the inverted copula: "Spanish is my first language"
            r"^(?P<value>[A-Z][a-z]+(?:\s+and\s+[A-Z][a-z]+)?)\s+"
            + _IS
            + r"\s+my\s+(?:native|first|mother)\s+(?:language|tongue)s?\b",
            _native,
        ),
        (  # "everyone calls me Jay" ("they call me Jay" is the pattern above; "she calls me
            # every day" is neither)
            r"\b(?:[Ee]veryone|[Ee]verybody)\s+calls\s+me(?P<neg>)\s+(?P<value>.+)$",
            _single("has_name", leading_name),
        ),
        (  # "Berlin has been home for five years" (never "Berlin is home to ...")
            r"^(?!(?:This|That|It|Here|There|Home|Work|What|Where|Which|Who|Nowhere|Anywhere"
            r"|Everywhere|Somewhere)\b)(?P<value>[A-Z][\w.'-]*(?:\s+[A-Z][\w.'-]*){0,3})"
            r"\s+(?:is|has been)(?P<neg>\s+no longer|\s+not)?\s+(?:my\s+)?home\b(?!\s+to\b)",
            _single("lives_in", place),
        ),
    )
)

_ATTRIBUTE_INDEX = NeedleIndex.of([pattern for pattern, _ in _ATTRIBUTES])
"""The attribute patterns' needles, found in one pass: a pattern none of whose needles is in
the clause is not searched (:class:`~formation.screening.NeedleIndex`)."""


def propose_attributes(text: str) -> list[Finding]:
    """ "my name is Ana", "call me Ana", "my timezone is CET", "my favourite editor is Helix",
    "Spanish is my first language", "Berlin has been home for years"."""
    findings: list[Finding] = []
    for pattern, handler in _ATTRIBUTE_INDEX.chosen(text, _ATTRIBUTES):
        for match in pattern.finditer(text):
            findings.extend(handler(match))
    return findings


def propose_manages(predicate: Predicate) -> list[Finding]:
    """ "I manage the data team", "I lead Bo and Eve", "I report to Carla"; never "I managed
    to …" (an achievement, not a report)."""
    rest = predicate.rest
    if predicate.lemma != "report" and rest.lower().startswith("to "):
        return []  # "I managed to ride …", "I manage to run most days": what was done, no one
    if predicate.lemma == "report":
        if not rest.lower().startswith("to "):
            return []
        bosses = name_list(rest[3:]) or [object_phrase(rest[3:])]
        return [Finding(boss, "manages", "I") for boss in bosses if boss]
    return [Finding(predicate.subject, "manages", item) for item in object_list(rest)]


HANDLERS = {"manage": propose_manages, "lead": propose_manages, "report": propose_manages}


_KIN_WORD = re.compile(
    r"(?:" + _KIN + r"|engaged|married|year-old|missus|missis|wifey|hubby|other half)"
)
"""A kin word, or the step a couple took: every pattern of :func:`propose_relatives` goes
through one (its own patterns' needles would be "my" and "have", in most clauses)."""

TRIGGERS: ClauseTriggers = {
    propose_relatives: (_KIN_WORD,),
    propose_attributes: tuple(pattern for pattern, _ in _ATTRIBUTES),
}
"""For each clause-wide reader, the patterns one of which must match a clause for it to find
anything (:mod:`.dispatch` skips it otherwise)."""
