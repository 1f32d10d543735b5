"""The speaker's own plans and decisions: ``intends_to`` and ``committed_to``.

Plans are durable enough to remember (they shape what an agent should ask next) and the
vocabulary has the relation ("something the subject plans to do"), so they form — weakly, and
only when concrete and the speaker's own: opening or starting a venture of their own ("I'm
opening a bakery", "a place to open my studio"), adoption ("researching adoption agencies"), a
trip planned to a named place, a named event ahead ("I'm going to a film festival", "I have a
council meeting coming up"), and a sign-up, booking or ticket for something ahead ("I signed up
for a pottery class", "I booked a trip to Oslo"): the sign-up is done, the class is not, so it
is a plan, never a past ``participated_in``. A plan whose words give its date ("next month")
carries it in its name, "attend pottery class (2024-06)", as a dated event does
(:func:`.events._dated`). A wish ("I'd love to …") or a hedge stays silent (:mod:`.mood`);
someone else's plan ("my cousin is opening a bakery") names no "I". "I decided to …" is the
speaker's decision (``committed_to``), unless it points at something told elsewhere ("decided to
include this").
"""

from __future__ import annotations

import re
from datetime import date

from engram.formation.deterministic.dates import before_ahead, ground_ahead
from engram.formation.deterministic.dispatch import Reader, Triggers
from engram.formation.deterministic.ends import words
from engram.formation.deterministic.findings import WEAK_CONFIDENCE, Finding
from engram.formation.deterministic.nouns import PLACEHOLDERS, closed
from engram.formation.deterministic.phrases import ADVERBS, TIME_TAIL
from engram.formation.deterministic.pursuits import EVALUATIVE, named_event, short_phrase
from engram.formation.deterministic.terms import strip_determiners
from engram.formation.screening import screened

_VENTURES = closed(
    """
    business studio shop store bakery cafe company restaurant podcast blog channel nonprofit
    charity gallery salon gym clinic practice agency brand label school daycare
    """
)
_VENTURE = r"(?:[\w-]+\s+){0,2}?(?:" + "|".join(sorted(_VENTURES)) + r")"
VENTURE_PATTERN = _VENTURE
"""A venture of the closed list with up to two words before it ("online clothing store")."""
_OWN_VENTURE = screened(
    r"\bI(?:'m| am)\s+" + ADVERBS + r"(?:starting|opening|launching)\s+(?:up\s+)?"
    r"(?:my\s+own\s+|my\s+|a\s+|an\s+)(?P<obj>" + _VENTURE + r")\b"
    r"|\bto\s+(?:open|start|launch)\s+my\s+(?:own\s+)?(?P<mine>" + _VENTURE + r")\b"
)
"""The speaker's own venture under way or planned: "I'm opening a bakery", "a place to open my
studio". Someone else's ("to open their shop") is not the speaker's plan."""
_ADOPTION = screened(
    r"\b(?:[Rr]esearching|[Ll]ooking into|started|starting|begun|began)\s+(?:the\s+)?"
    r"adoption\b"
    r"|\bI(?:'ve|\s+have)?\s+" + ADVERBS + r"(?:applied|applying|signed\s+up)\s+(?:to|with|for)\s+"
    r"(?:an?\s+|the\s+|two\s+|three\s+|some\s+|several\s+|a\s+few\s+)?adoption\s+"
    r"(?:agenc(?:y|ies)|program|process)\b"
    r"|\bI\s+"
    + ADVERBS
    + r"(?:contacted|asked|called|emailed)\s+[\w\s]{0,30}?\bfor\s+adoption\s+advice\b"
    r"|\bI(?:'m| am)\s+" + ADVERBS + r"(?:planning|hoping|going|trying)\s+to\s+adopt\b"
    r"|\badoption\s+agenc(?:y|ies)\s+I(?:'m| am|'ve been| have been)\s+(?:looking into|researching"
    r"|considering|contacting)\b"
)
_PLANNED_TRIP = screened(
    r"(?:^|\b(?:I(?:'m| am)|[Ww]e(?:'re| are))\s+)[Pp]lanning\s+(?:a|an|my|our)\s+"
    r"(?P<kind>(?:[\w-]+\s+)?(?:trip|vacation|holiday|visit))\s+to\s+"
    r"(?P<place>(?:the\s+)?[A-Z][\w'-]*(?:\s+[A-Z][\w'-]*){0,3})"
)
_GOING_TO_EVENT = screened(
    r"\bI(?:'m| am)\s+"
    + ADVERBS
    + r"(?:busy\s+(?:(?:at|with|in)\s+(?:the|my|our)\s+\w+\s+)?)?"
    + r"(?:(?:going|heading)\s+to|(?:getting\s+ready|preparing|training|practi[sc]ing)\s+for)"
    r"\s+(?:a|an|the|my)\s+(?P<event>[^,.;!?]+)"
)
"""A coming event of the speaker's: "I'm going to a film festival this month", "I'm getting
ready for a chess tournament next month" (preparing or training for it: the event is ahead)."""
_COMING_UP = screened(
    r"\bI\s*(?:have|'ve got|have got)\s+(?:a|an|my)\s+(?P<event>[\w-]+(?:\s+[\w-]+){0,2}?)\s+"
    r"(?:coming up|next (?:week|month|weekend|year)|this (?:weekend|month)|tomorrow)\b"
)
""""I have a community meeting coming up": an event ahead of the speaker."""
_SIGNED_UP = screened(
    r"\bI(?:'ve| have)?\s+"
    + ADVERBS
    + r"(?:signed up|registered|enrolled|booked (?:a )?(?:spot|place|seat)|got tickets|bought tickets"
    r"|booked tickets)\s+(?:for|in|at|to)\s+(?:a|an|the|my|our|this|that)\s+(?P<event>[^,.;!?]+)"
)
"""A sign-up or ticket for an event: done now, the event ahead ("I registered for a 10K")."""
_BOOKED_TRIP = screened(
    r"\bI(?:'ve| have)?\s+" + ADVERBS + r"booked\s+(?:a|an|my|our)\s+"
    r"(?P<kind>(?:[\w-]+\s+)?(?:trip|vacation|holiday|flight|flights|cruise))\s+to\s+"
    r"(?P<place>(?:the\s+)?[A-Z][\w'-]*(?:\s+[A-Z][\w'-]*){0,3})"
)
""""I booked a flight to Oslo": a trip planned to a named place."""
_RUNNING_FOR = screened(
    r"\bI(?:'m|\s+am)\s+"
    + ADVERBS
    + r"(?:still\s+)?running\s+for\s+(?P<what>office|mayor|city\s+council"
    r"|council|congress|the\s+senate|senate|governor|school\s+board|re-?election|state\s+legislature)\b"
)
""""I'm running for office again": the speaker's commitment, as "I decided to run for office"."""
_DECIDED = screened(
    r"\bI(?:'ve| have)?\s+" + ADVERBS + r"(?:decided|chose)\s+to\s+(?!not\b)(?P<what>[^,.;!?]+)"
)
""""I decided to run for the council": the speaker's own decision (``committed_to``)."""
_DASH = re.compile(r"\s+[-\u2013\u2014]+\s+")
_PURPOSE = re.compile(
    r"\s+(?:in\s+order\s+)?to\s+(?:make|help|get|keep|show|see|learn|find|meet|raise|build"
    r"|support|give|start|try|stay|clear|spread|connect|push|reach)\b.*$"
)
""""decided to go to networking events to make things happen": what was decided ends before
what it was for."""


def _plans(text: str, occurred_on: date | None) -> list[Finding]:
    findings: list[Finding] = []
    venture = _OWN_VENTURE.search(text)
    if venture is not None and (
        kept := short_phrase(venture.group("obj") or venture.group("mine"))
    ):
        findings.append(Finding("I", "intends_to", f"open a {kept}", confidence=WEAK_CONFIDENCE))
    if _ADOPTION.search(text):
        findings.append(Finding("I", "intends_to", "adopt", confidence=WEAK_CONFIDENCE))
    trip = _PLANNED_TRIP.search(text)
    if trip is not None:
        place = strip_determiners(trip.group("place"))
        findings.append(_planned(f"take a trip to {place}", text, occurred_on))
    return findings


def _events_ahead(text: str, occurred_on: date | None) -> list[Finding]:
    match = _GOING_TO_EVENT.search(text) or _COMING_UP.search(text)
    if match is None:
        return []
    event = short_phrase(EVALUATIVE.sub("", match.group("event")))
    if not event or not named_event(event):
        return []
    return [_planned(f"attend {event}", text, occurred_on)]


def _signed_up(text: str, occurred_on: date | None) -> list[Finding]:
    """ "I signed up for a pottery class next month": the class is a plan with its date."""
    findings: list[Finding] = []
    match = _SIGNED_UP.search(text)
    if match is not None:
        event = short_phrase(EVALUATIVE.sub("", before_ahead(match.group("event"))))
        if event and named_event(event):
            findings.append(_planned(f"attend {event}", text, occurred_on))
    trip = _BOOKED_TRIP.search(text)
    if trip is not None:
        place = strip_determiners(trip.group("place"))
        findings.append(_planned(f"take a trip to {place}", text, occurred_on))
    return findings


def _planned(plan: str, text: str, occurred_on: date | None) -> Finding:
    """The plan, named with its date when the clause gives one ahead of the episode's."""
    when = ground_ahead(text, occurred_on)
    return Finding(
        "I", "intends_to", f"{plan} ({when})" if when else plan, confidence=WEAK_CONFIDENCE
    )


def _running_for(text: str, occurred_on: date | None) -> list[Finding]:
    match = _RUNNING_FOR.search(text)
    if match is None:
        return []
    return [Finding("I", "committed_to", f"run for {' '.join(match.group('what').split())}")]


def _decided(text: str, occurred_on: date | None) -> list[Finding]:
    match = _DECIDED.search(text)
    if match is None:
        return []
    what = _DASH.split(TIME_TAIL.sub("", _PURPOSE.sub("", match.group("what"))), maxsplit=1)[0]
    what = what.strip()
    if not what or len(words(what)) > 6 or set(words(what)) & PLACEHOLDERS:
        return []  # "decided to include this": what "this" is lives in another message
    return [Finding("I", "committed_to", what)]


PROPOSERS: tuple[Reader, ...] = (_plans, _events_ahead, _signed_up, _decided, _running_for)

TRIGGERS: Triggers = {
    _plans: (_OWN_VENTURE, _ADOPTION, _PLANNED_TRIP),
    _events_ahead: (_GOING_TO_EVENT, _COMING_UP),
    _signed_up: (_SIGNED_UP, _BOOKED_TRIP),
    _decided: (_DECIDED,),
    _running_for: (_RUNNING_FOR,),
}
"""For each reader, the patterns one of which must match a clause for it to find anything
(:mod:`.dispatch` skips it otherwise)."""
