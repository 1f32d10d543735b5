"""What people pursue, told in passing: passions, groups they belong to, plans, outings.

Real conversation states these inside longer sentences, rarely as "I <verb> <object>" at the
start of a clause: "… 'cause I'm passionate about pottery", "I read it to my writers group",
"still looking for a place to open my bakery", "went kayaking". Each pattern here is anchored on
the speaker's own words ("I'm", "my") and a closed set of heads, so it can search the whole
clause without reading someone else's plans or groups as the speaker's:

* a passion or a long interest → ``interested_in`` ("I'm passionate about pottery", "my passion
  for dance", "(I've) always been interested in astronomy");
* "my <kind> club/group/team/choir/band" → ``member_of`` ("my book club"), only with a kind
  word before the head ("my group" names nothing);
* a plan of the speaker's own → ``intends_to`` with the verb phrase as told: opening or starting
  a business of their own, adopting, a trip being planned to a named place. Plans are durable
  enough to remember (they shape what an agent should ask next) and the vocabulary has the
  relation; a wish ("I'd love to …") stays silent (:mod:`.mood`);
* "went hiking / went horseback riding" → ``participated_in`` the outing, past tense.
"""

from __future__ import annotations

import re
from datetime import date

from formation.deterministic.ends import words
from formation.deterministic.findings import WEAK_CONFIDENCE, Finding
from formation.deterministic.nouns import (
    ABSTRACT_NOUNS,
    EVENT_HEADS,
    HOBBY_GERUNDS,
    PLACEHOLDERS,
    VAGUE_EVENTS,
    closed,
)
from formation.deterministic.phrases import ADVERBS, CLAUSE_TAIL, TIME_TAIL
from formation.deterministic.terms import cut_phrase, strip_determiners

_UNTIL = (
    r"(?=\s*(?:[,.;:!?)]|$)|\s+(?:and|or|but|so|because|'cause|cause|since|as|with|in|at|for|these"
    r"|this|that|now|lately|too|ever|again|which|who|when|ever since|all|from|is|was|are|has"
    r"|have|brings|makes|keeps|helps|gives|never|always|still)\b)"
)
_NOUNS = r"[\w-]+(?:\s+[\w-]+){0,3}?" + _UNTIL
"""At most four words that end where the clause goes on: "sailing never faded" is no end."""
_PASSIONATE = re.compile(
    r"\bI(?:'m| am)\s+(?:so\s+|really\s+|very\s+|truly\s+|super\s+|just\s+)?"
    r"(?:passionate|enthusiastic)\s+about\s+(?P<obj>" + _NOUNS + r")"
    r"|\bI(?:'m| am)\s+(?:so\s+|really\s+|very\s+)?(?:keen on|into)\s+(?P<keen>" + _NOUNS + r")"
    r"|\b[Mm]y\s+(?:real\s+|true\s+|big\s+|biggest\s+|deep\s+)?(?:passion|love)\s+for\s+"
    r"(?P<for>" + _NOUNS + r")"
    r"|(?:^|\bI(?:'ve| have)\s+)(?:[Aa]lways|[Ll]ong)\s+been\s+(?:really\s+|very\s+|so\s+)?"
    r"(?:interested|fascinated)\s+(?:in|by)\s+(?P<always>" + _NOUNS + r")"
    r"|\bI(?:'m| am|'ve always been| have always been)\s+(?:really\s+|so\s+|just\s+)?drawn\s+to\s+"
    r"(?P<drawn>" + _NOUNS + r")"
)
_GROUP = re.compile(
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
_VENTURES = closed(
    """
    business studio shop store bakery cafe company restaurant podcast blog channel nonprofit
    charity gallery salon gym clinic practice agency brand label school daycare
    """
)
_VENTURE = r"(?:[\w-]+\s+){0,2}?(?:" + "|".join(sorted(_VENTURES)) + r")"
_OWN_VENTURE = re.compile(
    r"\bI(?:'m| am)\s+" + ADVERBS + r"(?:starting|opening|launching)\s+(?:up\s+)?"
    r"(?:my\s+own\s+|my\s+|a\s+|an\s+)(?P<obj>" + _VENTURE + r")\b"
    r"|\bto\s+(?:open|start|launch)\s+my\s+(?:own\s+)?(?P<mine>" + _VENTURE + r")\b"
)
"""The speaker's own venture under way or planned: "I'm opening a bakery", "a place to open my
studio". Someone else's ("to open their shop") is not the speaker's plan."""
_ADOPTION = re.compile(
    r"\b(?:[Rr]esearching|[Ll]ooking into|started|starting|begun|began)\s+(?:the\s+)?"
    r"adoption\b"
    r"|\bI(?:'m| am)\s+" + ADVERBS + r"(?:planning|hoping|going|trying)\s+to\s+adopt\b"
    r"|\badoption\s+agenc(?:y|ies)\s+I(?:'m| am|'ve been| have been)\s+(?:looking into|researching"
    r"|considering|contacting)\b"
)
_PLANNED_TRIP = re.compile(
    r"(?:^|\bI(?:'m| am)\s+)[Pp]lanning\s+(?:a|an|my|our)\s+"
    r"(?P<kind>(?:[\w-]+\s+)?(?:trip|vacation|holiday|visit))\s+to\s+"
    r"(?P<place>(?:the\s+)?[A-Z][\w'-]*(?:\s+[A-Z][\w'-]*){0,3})"
)
_WENT_OUT = re.compile(
    r"(?:^|\bI\s+)" + ADVERBS + r"[Ww]ent\s+(?P<what>(?:horseback\s+)?riding|[a-z]+ing)\b"
)
_GOING_TO_EVENT = re.compile(
    r"\bI(?:'m| am)\s+"
    + ADVERBS
    + r"(?:going|heading)\s+to\s+(?:a|an|the|my)\s+(?P<event>[^,.;!?]+)"
)
"""A coming event of the speaker's: "I'm going to a film festival this month"."""
_FAVE = re.compile(
    r"^(?P<what>[A-Z][\w-]*(?:,?\s+[a-z][\w-]*){0,5}?)\s+(?:is|are)\s+(?:one of\s+)?my\s+"
    r"(?:absolute\s+|all-time\s+)?(?:faves?|favou?rites?|favou?rite\s+things?|top\s+pick"
    r"|thing|jam)\b"
)
""""Drawing birds is one of my faves", "Contemporary is my top pick", "Board games are my
thing": a preference told with the thing first (the gate drops "This is my fave")."""
_LOOKING_INTO = re.compile(
    r"\bI(?:'ve| have)\s+been\s+" + ADVERBS + r"(?:looking into|reading up on|reading about"
    r"|learning about|getting into)\s+(?P<obj>" + _NOUNS + r")"
)
""""I've been looking into local history": an interest the speaker is pursuing."""
_HAD_EVENT = re.compile(
    r"(?:^|\bI\s+)" + ADVERBS + r"(?:had|threw|hosted)\s+(?:a|an)\s+(?P<event>[^,.;!?]+)"
)
_COMING_UP = re.compile(
    r"\bI\s*(?:have|'ve got|have got)\s+(?:a|an|my)\s+(?P<event>[\w-]+(?:\s+[\w-]+){0,2}?)\s+"
    r"(?:coming up|next (?:week|month|weekend|year)|this (?:weekend|month)|tomorrow)\b"
)
""""I have a community meeting coming up": an event ahead of the speaker."""
_INSTRUMENT = re.compile(
    r"\bI\s+(?:also\s+|still\s+|now\s+)?play\s+(?:the\s+)?(?P<instrument>piano|guitar|violin|cello"
    r"|drums|clarinet|flute|saxophone|sax|trumpet|ukulele|bass|harp|banjo|trombone|oboe|viola"
    r"|harmonica|accordion|keyboards?)\b"
)
""""I play clarinet": a skill and a pastime at once, either way a durable fact."""
_EVALUATIVE = re.compile(
    r"^(?:(?:amazing|awesome|great|wonderful|lovely|beautiful|emotional|incredible|fantastic"
    r"|fun|nice|cool|huge|big|little|small|special|memorable|exciting|crazy|wild)"
    r"(?:\s+and\s+|,\s*|\s+))+",
    re.IGNORECASE,
)
""""an amazing and emotional wedding ceremony" is a wedding ceremony."""
_LOST_JOB_AT = re.compile(
    r"(?:^|\bI\s+)" + ADVERBS + r"(?:lost|quit|left)\s+my\s+(?:job|position)\s+at\s+"
    r"(?P<org>[^,.;!?]+)"
)
""""I lost my job at the print shop": no longer works there."""
_DECIDED = re.compile(
    r"\bI(?:'ve| have)?\s+" + ADVERBS + r"decided\s+to\s+(?!not\b)(?P<what>[^,.;!?]+)"
)
""""I decided to run for the council": the speaker's own decision (``committed_to``)."""
_DASH = re.compile(r"\s+[-\u2013\u2014]+\s+")
_ADVERB_WORDS = closed("never always still really just also only even ever")
_OUTINGS = HOBBY_GERUNDS | closed("riding sailing paddleboarding snorkeling scuba diving")


def _phrase(raw: str) -> str | None:
    """A short noun phrase cut before a clause or time tail, or nothing."""
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
    named = match.group("obj") or match.group("for") or match.group("always")
    what = _phrase(named or match.group("drawn") or match.group("keen"))
    return [Finding("I", "interested_in", what.lower())] if what else []


def _groups(text: str, occurred_on: date | None) -> list[Finding]:
    findings: list[Finding] = []
    for match in _GROUP.finditer(text):
        kind = words(match.group("kind"))
        if not kind or set(kind) & _NOT_KINDS or not all(w.isalpha() for w in kind):
            continue
        findings.append(Finding("I", "member_of", f"{match.group('kind')} {match.group('head')}"))
    return findings


def _plans(text: str, occurred_on: date | None) -> list[Finding]:
    findings: list[Finding] = []
    venture = _OWN_VENTURE.search(text)
    if venture is not None and (kept := _phrase(venture.group("obj") or venture.group("mine"))):
        findings.append(Finding("I", "intends_to", f"open a {kept}", confidence=WEAK_CONFIDENCE))
    if _ADOPTION.search(text):
        findings.append(Finding("I", "intends_to", "adopt", confidence=WEAK_CONFIDENCE))
    trip = _PLANNED_TRIP.search(text)
    if trip is not None:
        place = strip_determiners(trip.group("place"))
        findings.append(
            Finding("I", "intends_to", f"take a trip to {place}", confidence=WEAK_CONFIDENCE)
        )
    return findings


def _went_out(text: str, occurred_on: date | None) -> list[Finding]:
    match = _WENT_OUT.search(text)
    if match is None or match.group("what").split()[-1].lower() not in _OUTINGS:
        return []
    return [Finding("I", "participated_in", match.group("what").lower(), tense="past")]


def _events_ahead(text: str, occurred_on: date | None) -> list[Finding]:
    match = _GOING_TO_EVENT.search(text) or _COMING_UP.search(text)
    if match is None:
        return []
    event = _phrase(_EVALUATIVE.sub("", match.group("event")))
    if not event or not _named_event(event):
        return []
    return [Finding("I", "intends_to", f"attend {event}", confidence=WEAK_CONFIDENCE)]


def _named_event(event: str) -> bool:
    found = words(event)
    return found[-1] in EVENT_HEADS and not (len(found) == 1 and found[0] in VAGUE_EVENTS)


def _faves(text: str, occurred_on: date | None) -> list[Finding]:
    match = _FAVE.match(text)
    if match is None:
        return []
    if match.group("what").split()[0] in {"I", "I'm", "I've"}:
        return []  # "I love X, but Y is my top pick": Y is not the first word of the clause
    items = re.split(r",\s*(?:and\s+)?|\s+and\s+", match.group("what"))
    return [Finding("I", "prefers", item.strip().lower()) for item in items if item.strip()]


def _pursued(text: str, occurred_on: date | None) -> list[Finding]:
    match = _LOOKING_INTO.search(text)
    what = _phrase(match.group("obj")) if match else None
    return [Finding("I", "interested_in", what)] if what else []


def _instrument(text: str, occurred_on: date | None) -> list[Finding]:
    match = _INSTRUMENT.search(text)
    if match is None:
        return []
    return [Finding("I", "participated_in", f"playing the {match.group('instrument').lower()}")]


def _had_event(text: str, occurred_on: date | None) -> list[Finding]:
    """ "I just had a picnic with the kids": an event the speaker took part in."""
    match = _HAD_EVENT.search(text)
    event = _phrase(_EVALUATIVE.sub("", match.group("event"))) if match else None
    if not event or not _named_event(event) or set(words(event)) & ABSTRACT_NOUNS:
        return []  # "had an incredible time meeting …" is a feeling, not a meeting
    return [Finding("I", "participated_in", event, tense="past")]


def _lost_job_at(text: str, occurred_on: date | None) -> list[Finding]:
    match = _LOST_JOB_AT.search(text)
    org = _phrase(match.group("org")) if match else None
    if not org:
        return []
    return [Finding("I", "works_at", org, polarity="retract", tense="present")]


def _decided(text: str, occurred_on: date | None) -> list[Finding]:
    match = _DECIDED.search(text)
    if match is None:
        return []
    what = _DASH.split(TIME_TAIL.sub("", match.group("what")), maxsplit=1)[0].strip()
    if not what or len(words(what)) > 6 or set(words(what)) & PLACEHOLDERS:
        return []  # "decided to include this": what "this" is lives in another message
    return [Finding("I", "committed_to", what)]


PROPOSERS = (
    _passion,
    _groups,
    _plans,
    _went_out,
    _events_ahead,
    _faves,
    _pursued,
    _had_event,
    _decided,
    _lost_job_at,
    _instrument,
)
