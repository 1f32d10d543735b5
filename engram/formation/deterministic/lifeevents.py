"""Family events that change a relationship: married, engaged, divorced, a child born, a
relative who died.

A relationship is (I, related_to, <name or kin word>, facet <kin>) (:mod:`.relationships`);
these events start or end one, and the resolution core needs the exact claim they end to
supersede it (a retraction supersedes the current belief of the very same claim and nothing
else). So each event is told as the claim it starts or ends, in the words the relation forms
from otherwise:

* **married** — "I got married", "we got married last June", "Tom and I got married": the
  speaker has a spouse, (I, related_to, Tom, facet spouse), or ``spouse`` when unnamed
  ("I married Tom" and "I'm married to Tom" already form the named one);
* **engaged** — "we got engaged", "Ana and I got engaged": facet ``fiancé``;
* **divorced or split up** — "I got divorced", "I divorced Tom", "my husband and I split up",
  "I broke up with my girlfriend Ana": a retraction of the partner the words name (``spouse``
  for a divorce with no kin word, the kin word said otherwise), which supersedes the belief
  "I married Tom", "my husband" or "my girlfriend Ana" formed;
* **a child born** — "our daughter Mia was born", "we had a baby boy", "I gave birth to
  twins": the speaker has the child, by name when given (the same claim "my daughter Mia"
  forms, so telling it again reinforces);
* **a relative who died** — "my father passed away last year", "I lost my mom Rosa in 2019",
  "the death of my grandfather": one belief that says so with its date, (I, related_to,
  father, facet "late father (2023)"), and for a named relative the retraction of the living
  one, (I, related_to, Rosa, facet mother), so "my mom Rosa" told earlier is superseded. An
  unnamed parent never formed a living belief (parents go unnamed in every conversation), so
  there is nothing to retract and no retraction is made.

Pets are not relatives: "my dog Max passed away" is no kinship (and no ownership:
:mod:`.animals`). Only the family and friend words of the kin list take part; a colleague who
"died" is no family event. Every relative these events end is kept out of the same clause's
plain "my husband" reading (:func:`ended`), which would otherwise assert what the clause ends.
"""

from __future__ import annotations

import re
from datetime import date

from engram.formation.deterministic.dates import ground
from engram.formation.deterministic.dispatch import ClauseTriggers
from engram.formation.deterministic.findings import Finding
from engram.formation.deterministic.lexicon import RELATIVE_FACETS
from engram.formation.deterministic.nouns import closed
from engram.formation.screening import screened

__all__ = ["TRIGGERS", "couple", "ended", "propose_life_events"]

_FAMILY = "|".join(re.escape(w) for w in sorted(RELATIVE_FACETS, key=len, reverse=True))
_PARTNER = r"wife|husband|partner|spouse|boyfriend|girlfriend|fianc[eé]e?"
_NAME = r"[A-Z][a-z]+"
_ADVERBS = r"(?:(?:just|finally|recently|officially|sadly|suddenly|also|unexpectedly|happily)\s+)*"

_DIED = screened(
    r"\b[Mm]y\s+(?:(?:dear|beloved|sweet|old)\s+)?(?P<kin>" + _FAMILY + r")"
    r"(?:,?\s+(?P<name>"
    + _NAME
    + r"),?)?\s+(?:has\s+|had\s+)?"
    + _ADVERBS
    + r"(?:passed\s+away|passed\s+on|died|passed(?=\s*(?:$|[.,;!]|\s+(?:last|in|on|this|earlier"
    r"|yesterday|recently|two|three|four|five|six|a\s+(?:few|couple))\b)))"
)
""""my father passed away last year", "my grandma Rose died in 2019"; "my brother passed the
exam" is no death (a bare "passed" must end the clause or meet a time)."""
_LOST = screened(
    r"\bI\s+(?:have\s+|'ve\s+|had\s+)?" + _ADVERBS + r"lost\s+my\s+(?:(?:dear|beloved)\s+)?"
    r"(?P<kin>mother|mom|mum|father|dad|sister|brother|wife|husband|partner|son|daughter"
    r"|grandmother|grandma|grandfather|grandpa|aunt|uncle|cousin)"
    r"(?:,?\s+(?P<name>" + _NAME + r"))?\b(?!\s*'s)(?!\s+(?:in|at)\s+the\b)"
)
""""I lost my mom to cancer": family only, and not "lost my dad's watch" or "lost my sister in
the crowd"."""
_DEATH_OF = screened(
    r"\b(?:death|passing)\s+of\s+my\s+(?P<kin>" + _FAMILY + r")(?:\s+(?P<name>" + _NAME + r"))?\b"
)
_BORN = screened(
    r"\b(?:[Mm]y|[Oo]ur)\s+(?:(?:new|newborn|baby|little|first|second|third)\s+)*"
    r"(?P<kin>son|daughter|baby\s+boy|baby\s+girl|baby|boy|girl|twins|niece|nephew)"
    r"(?:,?\s+(?P<name>" + _NAME + r"),?)?\s+(?:was|were)\s+" + _ADVERBS + r"born\b"
)
""""our daughter Mia was born last week", "my nephew was born on Friday"."""
_HAD_BABY = screened(
    r"\b(?:I|[Ww]e)\s+(?:have\s+|'ve\s+)?" + _ADVERBS + r"(?:had|welcomed|gave\s+birth\s+to)\s+"
    r"(?:a|an|our|my)?\s*(?:(?:new|first|second|third|healthy|beautiful|little|baby)\s+)*"
    r"(?P<kin>baby\s+boy|baby\s+girl|baby|son|daughter|boy|girl|twins)\b"
    r"(?:\s*,?\s+(?:named\s+|called\s+)?(?P<name>" + _NAME + r"))?"
)
""""we had a baby girl", "I gave birth to a son, Leo", "we welcomed our first baby"."""
_WED = screened(
    r"\b(?:I|[Ww]e)(?:'ve\s+|\s+have\s+|\s+)?" + _ADVERBS + r"(?:got|gotten|been|were|are|'re"
    r"|am|'m)\s+" + _ADVERBS + r"(?P<event>married|engaged)\b(?!\s+to\b)"
    r"|\b(?:I|[Ww]e)\s+(?:have\s+|'ve\s+)?" + _ADVERBS + r"(?:tied\s+the\s+(?P<knot>knot)"
    r"|had\s+(?:our|my)\s+(?P<wedding>wedding))\b"
    r"|^(?:(?:[Jj]ust|[Ff]inally|[Rr]ecently|[Oo]fficially)\s+)?[Gg]ot\s+"
    + _ADVERBS
    + r"(?P<dropped>married|engaged)\b(?!\s+to\b)"
)
""""we got married last June", "I just got engaged!", "I'm married", "I've been married for
years", "we tied the knot", "we had our wedding", and with the "I" dropped, "Just got married!"
(a partner named after "to" is :mod:`.relationships`' "I got engaged to Tom"). "I'm not
married" and "I never got married" match nothing: no word may stand between the verb and the
event but the adverbs of ``_ADVERBS``."""
_TO_BE_WED = screened(
    r"\b(?:I|[Ww]e)(?:'re|'m|\s+am|\s+are)\s+" + _ADVERBS + r"getting\s+married\b"
    r"(?:\s+to\s+(?P<name>" + _NAME + r"))?"
)
""""I'm getting married next month", "we're getting married to…", "I'm getting married to
Tom": a wedding ahead says the speaker is engaged (``fiancé``)."""
_DIVORCED = screened(
    r"\bI\s+(?:have\s+|'ve\s+)?" + _ADVERBS + r"(?:(?:got|am|'m|was|am\s+now|'m\s+now)\s+"
    r"divorced(?:\s+from\s+(?P<from>" + _NAME + r"))?|divorced\s+(?P<whom>" + _NAME + r"))\b"
)
""""I got divorced", "I'm divorced from Tom", "I divorced Tom"."""
_BROKE_UP = screened(
    r"\bI\s+(?:have\s+|'ve\s+)?" + _ADVERBS + r"(?:broke|split)\s+up\s+with\s+"
    r"(?:my\s+(?P<kin>"
    + _PARTNER
    + r")(?:,?\s+(?P<name>"
    + _NAME
    + r"))?|(?P<whom>"
    + _NAME
    + r"))\b"
)
""""I broke up with my girlfriend Ana": the partner the kin word names ends. "I split up with
Tom" names no kin, so it cannot say which belief it ends, and forms nothing."""
_COUPLE_EVENT = re.compile(
    r"^I\s+" + _ADVERBS + r"(?:(?:got|have\s+gotten|'ve\s+gotten)\s+)?"
    r"(?P<event>married|engaged|divorced|split\s+up|separated|broke\s+up)\b"
    r"|^I\s+(?:have\s+|'ve\s+)?" + _ADVERBS + r"(?:tied\s+the\s+knot|had\s+our\s+wedding)\b"
)
""""… and I got married": the clause after "Tom and" (the splitter cuts before "I")."""
_COUPLE_PARTNER = re.compile(
    r"^(?:(?:[Mm]y\s+(?P<kin>" + _PARTNER + r"))(?:\s+(?P<name>" + _NAME + r"))?"
    r"|(?P<lone>" + _NAME + r"))$"
)
_NOT_NAMES = closed(
    """
    in on at last this next so very really on and the a we i my our today yesterday thanks
    thank hey hi hello oh yes yeah wow sorry congrats well but anyway okay ok dear cheers
    january february march april may june july august september october november december
    monday tuesday wednesday thursday friday saturday sunday
    """
)
_BABY_KIN = {
    "baby boy": "son",
    "boy": "son",
    "son": "son",
    "baby girl": "daughter",
    "girl": "daughter",
    "daughter": "daughter",
    "baby": "child",
    "twins": "child",
    "niece": "niece",
    "nephew": "nephew",
}
_YEAR = re.compile(r"\bin\s+(?P<year>(?:19|20)\d\d)\b")


def propose_life_events(text: str, occurred_on: date | None) -> list[Finding]:
    """Every family event in one clause, as the relationship it starts or ends."""
    findings: list[Finding] = []
    for pattern in (_DIED, _LOST, _DEATH_OF):
        for match in pattern.finditer(text):
            findings += _died(match, text, occurred_on)
    for pattern in (_BORN, _HAD_BABY):
        for match in pattern.finditer(text):
            kin = _BABY_KIN[" ".join(match.group("kin").lower().split())]
            findings.append(_related(_name(match.group("name")) or kin, kin))
    wed = _WED.search(text)
    if wed is not None:
        event = wed.group("event") or wed.group("dropped")
        kin = "fiancé" if event == "engaged" else "spouse"
        findings.append(_related(kin, kin))
    ahead = _TO_BE_WED.search(text)
    if ahead is not None:
        findings.append(_related(_name(ahead.group("name")) or "fiancé", "fiancé"))
    divorced = _DIVORCED.search(text)
    if divorced is not None:
        whom = _name(divorced.group("from") or divorced.group("whom"))
        findings.append(_related(whom or "spouse", "spouse", polarity="retract"))
    broke = _BROKE_UP.search(text)
    if broke is not None and broke.group("kin"):
        kin = _kin(broke.group("kin"))
        findings.append(_related(_name(broke.group("name")) or kin, kin, polarity="retract"))
    return _distinct(findings)


def couple(partner: str, clause: str) -> list[Finding]:
    """ "Tom and I got married", "my husband and I split up": the clause splitter cut before
    "I", so the partner is the clause before (``partner``: all of it, a name or "my <partner
    kin> [Name]") and ``clause`` starts at "I". Married and engaged start the relationship;
    divorced, separated, split or broke up end it."""
    event = _COUPLE_EVENT.match(clause)
    who = _COUPLE_PARTNER.match(partner.strip())
    if event is None or who is None:
        return []
    name = _name(who.group("name") or who.group("lone"))
    said = _kin(who.group("kin")) if who.group("kin") else None
    if who.group("lone") and name is None:
        return []
    kind = " ".join((event.group("event") or "married").split())
    if kind in {"married", "engaged"}:
        # "my wife and I got married": the partner as the clause before told her
        kin = said or ("spouse" if kind == "married" else "fiancé")
        return [_related(name or kin, kin)]
    kin = said or "spouse"
    if said is None and kind != "divorced":
        return []  # "Tom and I split up": no word says what Tom was
    return [_related(name or kin, kin, polarity="retract")]


def ended(findings: list[Finding]) -> set[tuple[str, str]]:
    """(object, facet) of every relationship the findings end: the same clause's plain
    reading of "my husband" must not assert it again."""
    gone = {
        (f.object.lower(), (f.facet or "").lower())
        for f in findings
        if f.relation == "related_to" and f.polarity == "retract"
    }
    for f in findings:
        if f.relation == "related_to" and (f.facet or "").startswith("late "):
            kin = (f.facet or "")[5:].split(" (")[0]
            gone |= {(f.object.lower(), kin), (kin, kin)}
    return gone


def _died(match: re.Match[str], text: str, occurred_on: date | None) -> list[Finding]:
    """The late relative, dated by the words after the death, else by the clause's ("Last
    week, my grandma passed away")."""
    kin = _kin(match.group("kin"))
    name = _name(match.group("name"))
    rest = text[match.start() :]
    year = _YEAR.search(rest)
    when = year.group("year") if year else ground(rest, occurred_on) or ground(text, occurred_on)
    late = f"late {kin}" + (f" ({when})" if when else "")
    found = [_related(name or kin, late)]
    if name is not None:
        found.insert(0, _related(name, kin, polarity="retract"))
    return found


def _kin(word: str) -> str:
    lowered = word.lower()
    return RELATIVE_FACETS.get(lowered, "spouse" if lowered == "spouse" else lowered)


def _name(word: str | None) -> str | None:
    if word is None or word.lower() in _NOT_NAMES:
        return None
    return word


def _related(obj: str, facet: str, *, polarity: str | None = None) -> Finding:
    return Finding("I", "related_to", obj, facet=facet, polarity=polarity, tense="present")


def _distinct(findings: list[Finding]) -> list[Finding]:
    seen: set[tuple[str, str | None, str | None]] = set()
    kept: list[Finding] = []
    for f in findings:
        key = (f.object.lower(), f.facet, f.polarity)
        if key not in seen:
            seen.add(key)
            kept.append(f)
    return kept


TRIGGERS: ClauseTriggers = {
    propose_life_events: (
        _DIED,
        _LOST,
        _DEATH_OF,
        _BORN,
        _HAD_BABY,
        _WED,
        _TO_BE_WED,
        _DIVORCED,
        _BROKE_UP,
    )
}
"""The patterns one of which must match a clause for :func:`propose_life_events` to find
anything (:mod:`.dispatch` skips it otherwise)."""
