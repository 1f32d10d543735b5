"""What a person does again and again, does for a living, or is about to do: routines,
vocations and plans with a named time, told the ways real talk tells them.

* **A pastime told as what it does for the speaker** — "Dancing makes me so happy", "Writing
  helps me make sense of things", "Hiking has opened up a whole new world for me", "Running is
  my therapy": an interest, (I, interested_in, dancing). Only a pastime of the closed list
  (:func:`.habits.pastime`), and only what it does *for* the speaker ("Running makes me
  nervous" is no love of it).
* **A routine started** — "I just started going to boot camps with my family", "I started a
  weekend yoga class": present participation, (I, participated_in, boot camps).
* **Helping out or volunteering, told mid-sentence** — "… and had the chance to volunteer at
  the youth centre", "I've started helping out with a food drive".
* **A vocation** — "I've been teaching piano for years" (``has_role`` piano teacher, as "I teach
  piano" is), "I coach a junior football team" (coach), "I play bass in a band" (``member_of``
  band).
* **A plan with a named time** — "I'm off to Lisbon next month", "I'm moving to Oslo in
  June", "our hike next Saturday": (I, intends_to, trip to Lisbon (2024-06)), dated when the
  words ground a day ahead (:func:`.dates.ground_ahead`); a plan without its time is too thin
  and forms nothing here.

A question, a wish or a hedge forms nothing (:mod:`.mood`); a "we" routine is the speaker's
too ("we started going to a climbing gym"), as a "we" outing is (:mod:`.events`).
"""

from __future__ import annotations

import re
from datetime import date

from engram.formation.deterministic.activities import took_up
from engram.formation.deterministic.dates import before_ahead, ground, ground_ahead
from engram.formation.deterministic.dispatch import Reader, Triggers
from engram.formation.deterministic.ends import words
from engram.formation.deterministic.findings import WEAK_CONFIDENCE, Finding
from engram.formation.deterministic.habits import pastime
from engram.formation.deterministic.nouns import (
    ACTIVITY_HEADS,
    EVENT_HEADS,
    SPORTS,
    TAUGHT_SUBJECTS,
    closed,
)
from engram.formation.deterministic.phrases import ADVERBS, CLAUSE_TAIL, PLANNED, TIME_TAIL
from engram.formation.deterministic.pursuits import EVALUATIVE
from engram.formation.deterministic.terms import cut_phrase, strip_determiners
from engram.formation.screening import screened

__all__ = ["ANYWHERE", "PROPOSERS", "TRIGGERS"]

_INTEREST_NOUNS = closed(
    """
    nature music art writing poetry dance film films movies books reading photography theatre
    theater sport sports fitness cooking baking gardening painting travel fashion gaming
    """
)
"""Things a person loves that are told as a noun ("Nature's always been my haven", "Art's
allowed me to explore …"), besides pastime gerunds."""
_GOOD_FOR_ME = screened(
    r"^(?P<what>[A-Z][a-z]+ing|[A-Z][a-z]+)(?:\s+(?:and|&)\s+(?P<also>[a-z]+ing))?"
    r"(?:\s+for\s+me)?(?:'s\s+|\s+)"
    r"(?:(?:has|have)\s+(?:always\s+|really\s+|just\s+|totally\s+)?(?:been|become)\s+"
    r"(?:(?:like|such)\s+)?(?:my|a|an)\s+(?:real\s+|big\s+|huge\s+|true\s+)?"
    r"(?P<noun>escape|outlet|therapy|haven|happy\s+place|lifeline|passion|way\s+to|blessing"
    r"|must-have|constant|refuge|sanctuary|release)\b"
    r"|(?:(?:is|are|was)\s+)?(?:(?:always|really|definitely|totally|truly|honestly|just)\s+)?"
    r"(?:like\s+)?(?:a|my)\s+way\s+(?:to|for\s+me\s+to)\s+(?:express|relax|unwind|escape|de-?stress"
    r"|find|connect|clear|recharge|cope|feel)"
    r"|(?:(?:always|really|just|truly)\s+)?(?:been\s+)?(?:my|a)\s+(?:real\s+|true\s+|big\s+)?"
    r"(?:haven|escape|outlet|refuge|sanctuary|happy\s+place|lifeline)\b"
    r"|(?:is|are)\s+(?:(?:always|really|definitely|totally|truly|honestly)\s+)?(?:my|where\s+I)"
    r"\s+(?:real\s+|big\s+|true\s+|favou?rite\s+)?(?P<is>escape|outlet|therapy|haven|happy\s+place"
    r"|lifeline|passion|thing|refuge|sanctuary|release|life|everything|world|feel\s+most\s+alive"
    r"|am\s+most\s+alive"
    r"|'m\s+most\s+alive|feel\s+free|feel\s+at\s+home)\b"
    r"|(?:(?:always|really|just|totally|definitely|honestly|truly)\s+)?(?P<verb>(?:make|help"
    r"|keep|let|calm|relax|ground|center|centre|energi[sz]e|inspire)s?)\s+me\b"
    r"(?!\s+(?:so\s+|really\s+|very\s+|feel\s+)?(?:nervous|anxious|sad|sick|tired|scared|angry"
    r"|worried|stressed|uncomfortable|cry|miserable|exhausted|frustrated|bored|dizzy|sore))"
    r"|(?:(?:has|have)\s+)?(?:really\s+|totally\s+|truly\s+|always\s+)?(?:opened\s+up|opened|changed"
    r"|given|brought|taught|helped|allowed|let|kept)\s+(?:me|my|a\s+(?:whole\s+)?new)\b"
    r"|(?:(?:always|really|just|truly)\s+)?(?:brings|gives)\s+me\s+(?:so\s+much\s+|such\s+|a\s+lot"
    r"\s+of\s+)?(?:joy|peace|happiness|energy|purpose|strength|comfort|calm|freedom)\b)"
)
""""Dancing makes me so happy", "Writing and reading help me stay sane" (a second gerund
after "and"), "Hiking has become my escape", "Painting is where I feel most alive"."""
_STARTED_GOING = screened(
    r"^(?:I|[Ww]e)(?:'ve|\s+have)?\s+" + ADVERBS + r"(?:started|began)\s+"
    r"(?:(?:going\s+to|attending)\s+(?P<obj>[^,.;!?]+)|(?P<new>(?:a|an|my|our)\s+[^,.;!?]+))"
)
""""I just started going to boot camps", "I started a weekend yoga class", "We started
going to a climbing gym on Fridays"."""
_ROUTINE_HEADS = EVENT_HEADS - closed(
    "trip vacation holiday cruise wedding funeral graduation interview interviews test tests exam"
    " exams event events service group program programme meeting party"
) | closed("bootcamp bootcamps boot-camp camps classes lessons sessions workouts meetups gym")
"""What a routine started goes to: a class, a lesson, a club's sessions, a gym (a trip, a
wedding or an exam is no routine)."""
_CHANCE_TO = screened(
    r"\b(?:had|got)\s+(?:(?:the\s+)?(?:chance|opportunity|privilege)\s+)?to\s+volunteer\s+"
    r"(?P<prep>at|for|with)\s+(?P<org>(?:a|an|the|our|my|some)\s+[^,.;!?]+)"
)
_HELPING_OUT = screened(
    r"\bI(?:'ve|\s+have)?\s+" + ADVERBS + r"(?:started\s+|been\s+|am\s+|'m\s+)?"
    r"help(?:ing|ed)?\s+out\s+(?:with|at)\s+(?P<what>(?:a|an|the|our|my|some)\s+[^,.;!?]+)"
)
""""I just started helping out with a food drive", "I've been helping out at the shelter"."""
_TEACHING_FOR = re.compile(
    r"^I(?:'ve|\s+have)\s+been\s+teaching\s+(?P<what>[a-z][\w-]*)\b(?:\s+(?:for|since)\b|\s*$)"
)
""""I've been teaching piano for ten years": the speaker teaches piano."""
_COACH = re.compile(
    r"^I\s+(?:also\s+)?coach\s+(?:a|an|the)\s+(?:[\w-]+\s+){0,3}?"
    r"(?P<sport>[a-z]+)\s+(?:team|club|squad)\b"
)
""""I coach a junior football team": a coach, of a sport of the closed list ("I coach my son's
team" is a parent helping out, not a vocation)."""
_IN_A_BAND = re.compile(
    r"^I\s+(?:also\s+|still\s+)?(?:play|sing)\s+(?:(?:the\s+)?[a-z]+\s+)?in\s+(?:a|an|my)\s+"
    r"(?P<kind>(?:[a-z-]+\s+)?)(?P<head>band|orchestra|choir|quartet|trio|ensemble)\b"
)
""""I play bass in a jazz band", "I sing in a choir": a member of the band."""
_OFF_TO = screened(
    r"\bI(?:'m|\s+am)\s+" + ADVERBS + r"(?P<how>off|heading|headed|flying|moving)\s+to\s+"
    r"(?P<place>(?:the\s+)?[A-Z][\w'-]*(?:\s+[A-Z][\w'-]*){0,2})"
)
""""I'm off to Ireland next month", "I'm moving to Oslo in June": a plan ahead with a place."""
_OURS_AHEAD = screened(
    r"\b(?:[Oo]ur|[Mm]y)\s+(?:(?:big|first|annual|little|next)\s+)?"
    r"(?P<event>(?:[a-z-]+\s+)?(?:hike|trip|camping\s+trip|vacation|holiday|recital|concert|race"
    r"|marathon|tournament|wedding|party|retreat|reunion|match|gig|show|competition|meet"
    r"|exhibition|performance|getaway))\s+"
    r"(?P<when>next\s+(?:week|weekend|month|year|monday|tuesday|wednesday|thursday|friday"
    r"|saturday|sunday|summer|spring)|this\s+(?:weekend|saturday|sunday)|tomorrow"
    r"|in\s+(?:two|three|a\s+few|a\s+couple\s+of)\s+(?:days|weeks|months))\b",
    re.IGNORECASE,
)
""""our hike next month", "my recital next Friday": an event of the speaker's, ahead, dated."""
_WE_TOOK = screened(
    r"\b(?:a|the|that|this|our)\s+(?P<event>(?:[\w-]+\s+){0,2}?(?:trip|vacation|holiday|hike|cruise"
    r"|concert|festival|race|marathon|tour|camp|retreat|getaway))\s+(?:that\s+)?(?:I|we)\s+"
    r"(?:took|went\s+on|went\s+to|did|had|ran|attended)\b"
)
""""a road trip we took last year", "the festival we went to": an outing of the speaker's, told
in a relative clause, dated by the clause's words."""
_IN_PROGRAM = screened(
    r"\bI(?:'m|\s+am)\s+(?:(?:finally|now|officially|also)\s+)?in\s+(?:a|an|the)\s+"
    r"(?P<program>(?:[\w-]+\s+){1,3}?(?:program|programme|course|residency|apprenticeship"
    r"|internship|fellowship|bootcamp))\b"
)
""""I'm finally in the study abroad program I applied for": the speaker takes part in it."""
_CONTRIBUTED = screened(
    r"\b(?:[Aa]|[Aa]n|[Aa]nother|[Tt]he)\s+(?P<work>(?:[\w-]+\s+){0,2}?(?:script|screenplay|film|movie|book"
    r"|album|song|play|show|article|documentary|series|anthology))\s+(?:that\s+)?I\s+"
    r"(?:contributed\s+to|co-wrote|co-wrote|helped\s+(?:write|make|film|produce)|worked\s+on)\b"
    r"|\bI\s+"
    + ADVERBS
    + r"wrote\s+(?:a\s+few|some|a\s+couple\s+of|several)\s+(?:bits|scenes|lines"
    r"|parts|pages|chapters|verses)\s+for\s+(?:a|an|the|this)\s+(?P<for>(?:[\w-]+\s+){0,2}?"
    r"(?:script|screenplay|film|movie|book|album|song|play|show|series))\b"
)
""""another movie script that I contributed to was shown", "I wrote a few bits for a
screenplay": a work the speaker had a hand in (``contributed_to``)."""
_SPECIAL = re.compile(r"^(?:special|memorable|unforgettable|perfect|epic|quick|short|long)\s+")
_NOT_ROUTINE = closed("job business shop store company blog podcast channel family day week")


def _dated(event: Finding, text: str, occurred_on: date | None) -> Finding:
    """The event named with its date when the clause's words ground one (as :mod:`.events`
    names a dated event: one belief per event)."""
    when = ground(text, occurred_on)
    if when is None:
        return event
    return Finding(event.subject, event.relation, f"{event.object} ({when})", tense=event.tense)


def _good_for_me(text: str, occurred_on: date | None) -> list[Finding]:
    match = _GOOD_FOR_ME.match(text)
    if match is None:
        return []
    found: list[Finding] = []
    for told in (match.group("what"), match.group("also")):
        liked = _liked(told) if told else None
        if liked is not None:
            found.append(Finding("I", "interested_in", liked, tense="present"))
    return found


def _liked(told: str) -> str | None:
    """A pastime gerund of the closed list, or an interest told as a noun ("nature")."""
    word = told.lower()
    if word.endswith("ing"):
        return pastime(word)
    return word if word in _INTEREST_NOUNS else None


def _started_going(text: str, occurred_on: date | None) -> list[Finding]:
    match = _STARTED_GOING.match(text)
    if match is None:
        return []
    raw = match.group("obj") or match.group("new")
    obj = strip_determiners(CLAUSE_TAIL.sub("", cut_phrase(TIME_TAIL.sub("", raw))))
    obj = re.split(r"\s+(?:at|in|near|on|with)\s+", obj, maxsplit=1)[0]
    found = words(obj)
    if not found or len(found) > 4 or found[-1] in _NOT_ROUTINE:
        return []
    head = found[-1]
    if took_up(text, occurred_on):
        return []  # "I started going to yoga classes" is learning them (:mod:`.activities`)
    routine = head in _ROUTINE_HEADS or head.removesuffix("s") in _ROUTINE_HEADS
    return [Finding("I", "participated_in", obj, tense="present")] if routine else []


def _chance_to_volunteer(text: str, occurred_on: date | None) -> list[Finding]:
    match = _CHANCE_TO.search(text)
    if match is None:
        return []
    org = strip_determiners(CLAUSE_TAIL.sub("", cut_phrase(TIME_TAIL.sub("", match.group("org")))))
    org = re.split(r"\s+(?:at|in|near|on)\s+", org, maxsplit=1)[0]
    if not org or len(words(org)) > 4:
        return []
    return [
        Finding("I", "participated_in", f"volunteering {match.group('prep')} {org}", tense="past")
    ]


def _helping_out(text: str, occurred_on: date | None) -> list[Finding]:
    match = _HELPING_OUT.search(text)
    if match is None:
        return []
    what = strip_determiners(
        CLAUSE_TAIL.sub("", cut_phrase(TIME_TAIL.sub("", match.group("what"))))
    )
    found = words(what)
    if not found or len(found) > 4 or found[-1] not in EVENT_HEADS | closed("shelter bank kitchen"):
        return []
    return [Finding("I", "participated_in", what, tense="present")]


def _vocation(text: str, occurred_on: date | None) -> list[Finding]:
    teaching = _TEACHING_FOR.match(text)
    if teaching is not None:
        subject = teaching.group("what").lower()
        if subject in ACTIVITY_HEADS | SPORTS | TAUGHT_SUBJECTS | closed("piano guitar violin"):
            return [Finding("I", "has_role", f"{subject} teacher")]
        return []
    coach = _COACH.match(text)
    if coach is not None:
        return [Finding("I", "has_role", "coach")] if coach.group("sport") in SPORTS else []
    band = _IN_A_BAND.match(text)
    if band is not None:
        group = f"{band.group('kind')}{band.group('head')}"
        return [Finding("I", "member_of", group)]
    return []


def _we_took(text: str, occurred_on: date | None) -> list[Finding]:
    match = _WE_TOOK.search(text)
    if match is None or PLANNED.search(text[match.end() :]):
        return []
    event = EVALUATIVE.sub("", " ".join(match.group("event").split())) or match.group("event")
    event = _SPECIAL.sub("", event)
    return [_dated(Finding("I", "participated_in", event, tense="past"), text, occurred_on)]


def _in_program(text: str, occurred_on: date | None) -> list[Finding]:
    match = _IN_PROGRAM.search(text)
    if match is None:
        return []
    return [
        Finding("I", "participated_in", " ".join(match.group("program").split()), tense="present")
    ]


def _contributed(text: str, occurred_on: date | None) -> list[Finding]:
    match = _CONTRIBUTED.search(text)
    if match is None:
        return []
    work = " ".join((match.group("work") or match.group("for")).split())
    return [Finding("I", "contributed_to", work, tense="past")]


def _off_to(text: str, occurred_on: date | None) -> list[Finding]:
    match = _OFF_TO.search(text)
    if match is None:
        return []
    if before_ahead(text) == text:
        return []  # "I'm off to Spain" with no time: a trip or a move, too thin to keep
    when = ground_ahead(text, occurred_on)
    place = strip_determiners(match.group("place"))
    plan = f"move to {place}" if match.group("how") == "moving" else f"trip to {place}"
    dated = f"{plan} ({when})" if when else plan
    return [Finding("I", "intends_to", dated, confidence=WEAK_CONFIDENCE)]


def _ours_ahead(text: str, occurred_on: date | None) -> list[Finding]:
    match = _OURS_AHEAD.search(text)
    if match is None:
        return []
    when = ground_ahead(match.group("when"), occurred_on)
    event = " ".join(match.group("event").split())
    plan = f"{event} ({when})" if when else event
    return [Finding("I", "intends_to", plan, confidence=WEAK_CONFIDENCE)]


PROPOSERS: tuple[Reader, ...] = (_good_for_me, _started_going, _vocation)
"""Readers of a clause that opens with what they read."""
ANYWHERE: tuple[Reader, ...] = (
    _chance_to_volunteer,
    _helping_out,
    _off_to,
    _ours_ahead,
    _we_took,
    _in_program,
    _contributed,
)
"""Readers that search the whole clause."""

TRIGGERS: Triggers = {
    _good_for_me: (_GOOD_FOR_ME,),
    _started_going: (_STARTED_GOING,),
    _vocation: (_TEACHING_FOR, _COACH, _IN_A_BAND),
    _chance_to_volunteer: (_CHANCE_TO,),
    _helping_out: (_HELPING_OUT,),
    _off_to: (_OFF_TO,),
    _ours_ahead: (_OURS_AHEAD,),
    _we_took: (_WE_TOOK,),
    _in_program: (_IN_PROGRAM,),
    _contributed: (_CONTRIBUTED,),
}
"""For each reader, the patterns one of which must match a clause for it to find anything
(:mod:`.dispatch` skips it otherwise)."""
