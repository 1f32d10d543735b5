"""What people pursue, told in passing: passions, groups, outings, events had, faves, jobs lost.

Real conversation states these inside longer sentences, rarely as "I <verb> <object>" at the
start of a clause: "… 'cause I'm passionate about pottery", "I read it to my writers group",
"went kayaking". Each pattern here is anchored on the speaker's own words ("I'm", "my") and a
closed set of heads, so it can search the whole clause without reading someone else's groups
or passions as the speaker's:

* a passion or a long interest → ``interested_in`` ("I'm passionate about pottery", "my passion
  for dance", "always been interested in astronomy", "drawn to", "keen on", "into"), and an
  interest pursued ("I've been looking into local history");
* "my <kind> club/group/team/choir/band" → ``member_of`` ("my book club"), only with a kind
  word before the head ("my group", "my usual circle" name nothing);
* outings ("went kayaking"), events had ("had a picnic") and instruments played →
  ``participated_in``; a thing named first as "my top pick / my thing" → ``prefers``; "lost my
  job at X" → ``works_at`` X, retracted.

Plans and the speaker's own decisions are in :mod:`.plans`, which shares :func:`short_phrase`.
"""

from __future__ import annotations

import re
from datetime import date

from engram.formation.deterministic.dispatch import Reader, Triggers
from engram.formation.deterministic.ends import words
from engram.formation.deterministic.findings import Finding
from engram.formation.deterministic.habits import pastime
from engram.formation.deterministic.nouns import (
    ABSTRACT_NOUNS,
    EVENT_HEADS,
    HOBBY_GERUNDS,
    VAGUE_EVENTS,
    closed,
)
from engram.formation.deterministic.phrases import ADVERBS, CLAUSE_TAIL, TIME_TAIL
from engram.formation.deterministic.terms import cut_phrase, strip_determiners
from engram.formation.screening import screened

_UNTIL = (
    r"(?=\s*(?:[,.;:!?)]|$)|\s+(?:and|or|but|so|because|'cause|cause|since|as|with|in|at|for|these"
    r"|this|that|now|lately|too|ever|again|which|who|when|ever since|all|from|is|was|are|has"
    r"|have|brings|makes|keeps|helps|gives|never|always|still)\b)"
)
_NOUNS = r"[\w-]+(?:\s+[\w-]+){0,3}?" + _UNTIL
"""At most four words that end where the clause goes on: "sailing never faded" is no end."""
_PASSIONATE = screened(
    r"\bI(?:'m| am)\s+(?:so\s+|really\s+|very\s+|truly\s+|super\s+|just\s+)?"
    r"(?:passionate|enthusiastic)\s+about\s+(?P<obj>" + _NOUNS + r")"
    r"|\bI(?:'m| am)\s+(?:so\s+|really\s+|very\s+)?(?:keen on|into)\s+(?P<keen>" + _NOUNS + r")"
    r"|\b[Mm]y\s+(?:real\s+|true\s+|big\s+|biggest\s+|deep\s+)?(?:passion|love)\s+for\s+"
    r"(?P<for>" + _NOUNS + r")"
    r"|\bI(?:'ve|\s+have)?\s+(?:always\s+)?(?:had|got)\s+(?:a|such\s+a)\s+(?:real\s+|deep\s+|big\s+"
    r"|huge\s+|great\s+|soft\s+)?(?:love|passion|soft\s+spot)\s+for\s+(?P<had>" + _NOUNS + r")"
    r"|\b[Mm]y\s+(?P<mine>[a-z]+ing)\s+passion\b"
    r"|(?:^|\bI(?:'ve| have)\s+)(?:[Aa]lways|[Ll]ong)\s+been\s+(?:really\s+|very\s+|so\s+)?"
    r"(?:interested|fascinated)\s+(?:in|by)\s+(?P<always>" + _NOUNS + r")"
    r"|\bI(?:'m| am|'ve always been| have always been)\s+(?:really\s+|so\s+|just\s+)?drawn\s+to\s+"
    r"(?P<drawn>" + _NOUNS + r")"
)
_GROUP = screened(
    r"\b[Mm]y\s+(?P<kind>(?:[\w'-]+\s+){0,1}[\w'-]+)\s+"
    r"(?P<head>club|group|team|choir|band|league|troupe|crew|society|circle|guild)\b"
    r"(?!\s+(?:of|from|at|in|chat)\b)"
)
_NOT_KINDS = closed(
    """
    new old own favorite favourite whole little big small first last best main usual regular
    friend friends family support study work other local school kids kid normal inner close
    social immediate
    """
)
_WENT_OUT = screened(
    r"(?:^|\b(?:I|[Ww]e)\s+)" + ADVERBS + r"[Ww]ent\s+(?P<what>(?:horseback\s+)?riding|[a-z]+ing)\b"
)
_FAVE = re.compile(
    r"^(?P<what>[A-Z][\w-]*(?:\s+[A-Z][\w-]*){0,3}(?:,?\s+[a-z][\w-]*){0,5}?)(?:\s+(?:is|are)|'s)\s+"
    r"(?:(?:mostly|really|definitely|totally|always|still|just)\s+)?(?:one of\s+)?my\s+"
    r"(?:absolute\s+|all-time\s+)?(?:faves?|favou?rites?|favou?rite\s+things?|top\s+pick"
    r"|thing|jam)\b"
)
""""Drawing birds is one of my faves", "Contemporary is my top pick", "Board games are my
thing": a preference told with the thing first (the gate drops "This is my fave")."""
_LOOKING_INTO = screened(
    r"\bI(?:(?:'ve| have)\s+been|'m|\s+am)\s+" + ADVERBS + r"(?:looking into|reading up on"
    r"|reading about|learning about|getting into)\s+(?P<obj>" + _NOUNS + r")"
)
""""I've been looking into local history": an interest the speaker is pursuing."""
_HAD_EVENT = screened(
    r"(?:^|\b(?:I|[Ww]e)\s+)" + ADVERBS + r"(?:had|threw|hosted)\s+(?:a|an)\s+(?P<event>[^,.;!?]+)"
)
_INSTRUMENT = screened(
    r"\bI\s+(?:also\s+|still\s+|now\s+)?play\s+(?:the\s+)?(?P<instrument>piano|guitar|violin|cello"
    r"|drums|clarinet|flute|saxophone|sax|trumpet|ukulele|bass|harp|banjo|trombone|oboe|viola"
    r"|harmonica|accordion|keyboards?)\b"
)
""""I play clarinet": a skill and a pastime at once, either way a durable fact."""
EVALUATIVE = re.compile(
    r"^(?:(?:amazing|awesome|great|wonderful|lovely|beautiful|emotional|incredible|fantastic"
    r"|fun|nice|cool|huge|big|little|small|special|memorable|exciting|crazy|wild)"
    r"(?:\s+and\s+|,\s*|\s+))+",
    re.IGNORECASE,
)
""""an amazing and emotional wedding ceremony" is a wedding ceremony."""
_LOST_JOB_AT = screened(
    r"(?:^|\bI\s+)" + ADVERBS + r"(?:lost|quit|left)\s+my\s+(?:job|position)\s+at\s+"
    r"(?P<org>[^,.;!?]+)"
)
""""I lost my job at the print shop": no longer works there."""
_ADVERB_WORDS = closed("never always still really just also only even ever")
_OUTINGS = HOBBY_GERUNDS | closed("riding sailing paddleboarding snorkeling scuba diving")


_POINTING_ON = re.compile(r"^\s+(?:that|this|these|those|it|him|her|them|you|me|us)\b", re.I)
""""sharing that", "doing this": the thing done lives in another sentence; a gerund cut before
the word that points at it would read as a taste for "sharing"."""


_NEAR_ME = re.compile(
    r"\s+(?:(?:near|close\s+to)\s+(?:me|us|here|home)|nearby|in\s+town|around\s+here"
    r"|(?:by|at|in|on|near|along|down\s+by)\s+the\s+(?=(?-i:[a-z])))\b.*$",
    re.IGNORECASE,
)
""""a dance comp near me", "a fair in town", "a picnic by the river": where it was, no part of
what it was (a name stays: "a concert in the Albert Hall")."""


def short_phrase(raw: str) -> str | None:
    """A short noun phrase cut before a clause or time tail, or nothing."""
    raw = _NEAR_ME.sub("", raw)
    text = strip_determiners(CLAUSE_TAIL.sub("", cut_phrase(TIME_TAIL.sub("", raw))))
    found = words(text)
    if len(found) > 1 and found[-1] in {"stuff", "things"}:  # "fantasy stuff" is fantasy
        text, found = " ".join(text.split()[:-1]), found[:-1]
    if not found or len(found) > 4 or found[-1] in ABSTRACT_NOUNS or "sure" in found:
        return None
    if {"a", "an"} & set(found) or "the" in found[1:]:  # "creating a safe" was cut at a comma
        return None
    if any(w in _ADVERB_WORDS or w.endswith("ed") for w in found[1:]):
        return None  # "sailing never faded": the clause went on with a verb
    return text


def _passion(text: str, occurred_on: date | None) -> list[Finding]:
    match = _PASSIONATE.search(text)
    if match is None:
        return []
    if match.group("mine"):  # "turn my dancing passion into a business"
        liked = pastime(match.group("mine"))
        return [Finding("I", "interested_in", liked)] if liked else []
    named = match.group("obj") or match.group("for") or match.group("always") or match.group("had")
    raw = named or match.group("drawn") or match.group("keen")
    if raw.split()[-1].lower().endswith("ing") and _POINTING_ON.match(text[match.end() :]):
        return []  # "passionate about sharing that": what is shared is told elsewhere
    what = short_phrase(raw)
    return [Finding("I", "interested_in", what.lower())] if what else []


def _groups(text: str, occurred_on: date | None) -> list[Finding]:
    findings: list[Finding] = []
    for match in _GROUP.finditer(text):
        kind = words(match.group("kind"))
        if not kind or set(kind) & _NOT_KINDS or not all(w.isalpha() for w in kind):
            continue
        findings.append(Finding("I", "member_of", f"{match.group('kind')} {match.group('head')}"))
    return findings


def _went_out(text: str, occurred_on: date | None) -> list[Finding]:
    match = _WENT_OUT.search(text)
    if match is None or match.group("what").split()[-1].lower() not in _OUTINGS:
        return []
    return [Finding("I", "participated_in", match.group("what").lower(), tense="past")]


def named_event(event: str) -> bool:
    found = words(event)
    return found[-1] in EVENT_HEADS and not (len(found) == 1 and found[0] in VAGUE_EVENTS)


def _faves(text: str, occurred_on: date | None) -> list[Finding]:
    match = _FAVE.match(text)
    if match is None:
        return []
    if match.group("what").split()[0] in {"I", "I'm", "I've"}:
        return []  # "I love X, but Y is my top pick": Y is not the first word of the clause
    items = re.split(r",\s*(?:and\s+)?|\s+and\s+", match.group("what"))
    return [Finding("I", "prefers", _as_told(item.strip())) for item in items if item.strip()]


def _as_told(item: str) -> str:
    """A name keeps its capitals ("Harry Potter"); a common noun opening the clause does not."""
    return item if any(w[:1].isupper() for w in item.split()[1:]) else item.lower()


def _pursued(text: str, occurred_on: date | None) -> list[Finding]:
    match = _LOOKING_INTO.search(text)
    what = short_phrase(match.group("obj")) if match else None
    return [Finding("I", "interested_in", what)] if what else []


def _instrument(text: str, occurred_on: date | None) -> list[Finding]:
    match = _INSTRUMENT.search(text)
    if match is None:
        return []
    return [Finding("I", "participated_in", f"playing the {match.group('instrument').lower()}")]


def _had_event(text: str, occurred_on: date | None) -> list[Finding]:
    """ "I just had a picnic with the kids": an event the speaker took part in."""
    match = _HAD_EVENT.search(text)
    event = short_phrase(EVALUATIVE.sub("", match.group("event"))) if match else None
    if not event or not named_event(event) or set(words(event)) & ABSTRACT_NOUNS:
        return []  # "had an incredible time meeting …" is a feeling, not a meeting
    return [Finding("I", "participated_in", event, tense="past")]


def _lost_job_at(text: str, occurred_on: date | None) -> list[Finding]:
    match = _LOST_JOB_AT.search(text)
    org = short_phrase(match.group("org")) if match else None
    if not org:
        return []
    return [Finding("I", "works_at", org, polarity="retract", tense="present")]


PROPOSERS: tuple[Reader, ...] = (
    _passion,
    _groups,
    _went_out,
    _faves,
    _pursued,
    _had_event,
    _lost_job_at,
    _instrument,
)

TRIGGERS: Triggers = {
    _passion: (_PASSIONATE,),
    _groups: (_GROUP,),
    _went_out: (_WENT_OUT,),
    _faves: (_FAVE,),
    _pursued: (_LOOKING_INTO,),
    _had_event: (_HAD_EVENT,),
    _lost_job_at: (_LOST_JOB_AT,),
    _instrument: (_INSTRUMENT,),
}
"""For each reader, the patterns one of which must match a clause for it to find anything
(:mod:`.dispatch` skips it otherwise)."""
