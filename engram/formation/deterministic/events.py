"""Past events with their dates: what real people tell about their lives.

"I ran a half marathon last Saturday" is a durable fact about a person: an event they took
part in, with a date. It forms as (I, participated_in, half marathon), past tense (an event
relation, so admission keeps it), named with its date when the episode's date grounds "last
Saturday": (I, participated_in, half marathon (2023-05-06)), one belief carrying its date. The
event must be named by a known event noun ("race", "workshop", "parade", …): "I went to a lot
of trouble" is no event. Works finished ("I finished my first novel") are ``created``, trips
("on my trip to the Dolomites last year") are participation. :func:`propose_events` also runs :mod:`.activities` and :mod:`.belongings`.
"""

from __future__ import annotations

import re
from datetime import date

from engram.formation.deterministic import (
    activities,
    belongings,
    favourites,
    health,
    hosting,
    jobs,
    memberships,
    outings,
    pets,
    plans,
    pursuits,
    routines,
    skills,
    weddings,
)
from engram.formation.deterministic.dates import ground
from engram.formation.deterministic.dispatch import families
from engram.formation.deterministic.ends import words
from engram.formation.deterministic.findings import Finding
from engram.formation.deterministic.nouns import CREATIONS, EVENT_HEADS, VAGUE_EVENTS
from engram.formation.deterministic.phrases import (
    ADVERBS,
    CLAUSE_TAIL,
    PLANNED,
    TIME_PHRASE,
    TIME_TAIL,
)
from engram.formation.deterministic.terms import cut_phrase, strip_determiners
from engram.formation.screening import screened

_EVENT_VERBS = (
    r"went to|went on|attended|ran|ran in|did|completed|competed in|took part in"
    r"|participated in|volunteered at|volunteered for|joined|gave|hosted|organi[sz]ed|led"
    r"|took|visited|played in|performed at|performed in|entered|won|spoke at"
    r"|got back from|came back from|was at|were at|went on|set up|threw|held|passed|failed"
    r"|retook|sat"
    r"|had (?:a|such a) (?:blast|great time|good time|wonderful time|fantastic time|ball)"
    r"(?: (?:last|this) \w+| yesterday)? at"
)
_EVENT = re.compile(
    r"^(?:I|[Ww]e)\s+" + ADVERBS + r"(?P<verb>" + _EVENT_VERBS + r")\s+(?P<obj>.+)$",
    re.IGNORECASE,
)
""""We went to a folk festival" is told by someone who went: the speaker took part too."""
_DROPPED_VERBS = (
    r"Went|Attended|Ran|Completed|Competed|Took part|Participated|Volunteered|Joined|Gave"
    r"|Hosted|Organi[sz]ed|Visited|Performed|Entered|Won|Spoke|Got back|Came back|Finished"
    r"|Wrote|Graduated|Took|Had (?:a|such a) "
)
_DROPPED_I = re.compile(
    r"^(?:(?:"
    + _DROPPED_VERBS
    + r")|(?:Just|Finally|Recently|Also)\s+(?:"
    + _DROPPED_VERBS.lower()
    + r"))\b"
)
"""A sentence that opens with a past-tense event verb has dropped its "I" ("Went to a gig
last night", "Just got back from a road trip"); a lower-case continuation ("…, went to the
shop") is not read this way."""
_TRIP_TO = re.compile(
    r"^(?:(?:short|quick|little|long|brief|spontaneous|last-minute)\s+)?"
    r"(?P<trip>(?:[\w-]+\s+){0,2}?(?:trip|vacation|holiday|visit))\s+to\s+"
    r"(?P<place>(?:the\s+)?[A-Z][\w'-]*(?:\s+[A-Z][\w'-]*){0,3})"
)
_SUPERLATIVE = re.compile(
    r"^(?:(?:most|best|worst|coolest|greatest|biggest|craziest|wildest|funniest|nicest"
    r"|loveliest|sweetest|weirdest|strangest|longest|hardest|toughest|largest|smallest"
    r"|proudest|happiest|saddest|scariest)\s+)+(?=\w)",
    re.IGNORECASE,
)
"""The "coolest" in "the coolest Harry Potter party" says how it was, not what it was."""
_ON_A_TRIP = screened(
    r"\bon\s+(?:a|my|our)\s+(?P<kind>(?:road |camping |fishing |hiking |ski )?trip|hike|cruise"
    r"|vacation|holiday|run|bike ride|ride)\b(?!\s+to\b)"
)
_MY_TRIP = screened(
    r"\b(?:[Mm]y|[Oo]ur)\s+(?:recent\s+|last\s+|first\s+)?(?P<kind>trip|vacation|holiday|visit|journey)"
    r"\s+to\s+(?P<place>(?:the\s+)?[A-Z][\w'-]*(?:\s+[A-Z][\w'-]*){0,3})"
)
_PAST_TRIP = screened(
    r"\b(?:was|were|took|snapped|went|had|visited|loved|ago|last\s+\w+|yesterday)\b", re.I
)
_LEAD_TIME = screened(
    r"^(?:(?:last|this|earlier this)\s+\w+|yesterday|today|earlier today|on\s+\w+day"
    r"|(?:a few|a couple of|\w+)\s+(?:days|weeks|months|years)\s+ago),?\s+(?=(?:I|[Ww]e)\s)",
    re.IGNORECASE,
)
_GRADUATED = re.compile(r"^I\s+" + ADVERBS + r"graduated\b")
_CREATED = re.compile(
    r"^I\s+" + ADVERBS + r"(?:finished|wrote|completed|published|recorded|painted|made|built"
    r"|knitted|released|launched)\s+(?:writing\s+|painting\s+|recording\s+)?(?:my|a|an|this|that)\s+"
    r"(?P<obj>.+)$"
)

_IN_PROGRESS = re.compile(
    r"^I(?:'m| am)\s+" + ADVERBS + r"(?:(?:writing|filming|shooting|recording|directing|painting"
    r"|knitting|composing)\s+(?:(?:a|an|another|my)\s+)?|in\s+the\s+middle\s+of\s+(?:(?:a|an|my)\s+)?)"
    r"(?:(?:own|new|first|second|third|next)\s+)?(?P<obj>.+)$"
    r"|^I(?:'ve|\s+have)?\s+"
    + ADVERBS
    + r"started\s+on\s+(?:a|an|another|my)\s+(?:new\s+)?(?P<begun>.+)$"
)
_FROM_TAIL = re.compile(r"\s+(?:from|based\s+on|for|of\s+(?:my|our)\s+own)\b.*$", re.IGNORECASE)
""""my own movie from the road-trip script", "articles for an online mag": where the work
comes from or goes is no part of its name."""
""""I'm writing another novel", "I'm finally filming my own documentary": a work under way is
the speaker's, as "I'm working on a novel" is (``responsible_for``); only works of the closed
list ("I'm writing a letter to my landlord" is none)."""


def propose_events(text: str, occurred_on: date | None) -> list[Finding]:
    """Every event, activity, job change and new possession the clause states.

    A leading time phrase ("Last week, I went to …") is set aside for matching; the date is
    still grounded from the whole clause. Pursuits and plans (:mod:`.pursuits`, :mod:`.plans`)
    search the whole clause for the speaker's own words, so they run whatever it opens with.
    """
    possible = _INDEX.possible(text)
    findings = _TOLD_ANYWHERE.read(text, occurred_on, possible)
    if _DROPPED_I.match(text):
        told = "I " + text[0].lower() + text[1:]
        return [
            *findings,
            *_event(told, occurred_on, when_from=text),
            *_created(told, occurred_on, when_from=text),
            *_graduated(told, occurred_on, when_from=text),
        ]
    if _LEAD_TIME.match(text):
        stripped = _LEAD_TIME.sub("", text)
        return [
            *findings,
            *_event(stripped, occurred_on, when_from=text),
            *_created(stripped, occurred_on, when_from=text),
            *_graduated(stripped, occurred_on, when_from=text),
        ]
    return findings + _OPENING.read(text, occurred_on, possible)


def _event(text: str, occurred_on: date | None, when_from: str | None = None) -> list[Finding]:
    match = _EVENT.match(text)
    if match is None:
        return []
    raw = strip_determiners(TIME_TAIL.sub("", match.group("obj")))
    trip = _TRIP_TO.match(strip_determiners(TIME_PHRASE.sub("", match.group("obj"))))
    if trip is not None:
        place = strip_determiners(trip.group("place"))
        obj = _SUPERLATIVE.sub("", f"{trip.group('trip')} to {place}")
        return _dated(
            Finding("I", "participated_in", obj, tense="past"), when_from or text, occurred_on
        )
    obj = strip_determiners(CLAUSE_TAIL.sub("", cut_phrase(raw)))
    obj = _SUPERLATIVE.sub("", obj)
    core = re.split(r"\s+(?:at|in|on|near)\s+", obj, maxsplit=1)[0]
    found = words(core)
    if not found or found[-1] not in EVENT_HEADS or (len(words(obj)) == 1 and obj in VAGUE_EVENTS):
        return []
    if match.group("verb").lower() == "joined" and found[-1] == "group":
        return []  # a group joined is a membership (attributes), not an event
    return _dated(
        Finding("I", "participated_in", obj, tense="past"), when_from or text, occurred_on
    )


_WHEN_WE = screened(
    r"\b(?:when|after|while)\s+(?=(?:I|we)\s+" + ADVERBS + r"(?:went|took|did|ran|visited)\b)"
)
""""… my workmates when we went on a hiking trip": the event told inside a longer clause."""


def _when_we(text: str, occurred_on: date | None) -> list[Finding]:
    match = _WHEN_WE.search(text)
    if match is None or match.start() == 0:
        return []  # a clause that opens with "when" is read as it opens (:mod:`.reading`)
    told = text[match.end() :]
    told = told[0].upper() + told[1:] if told.startswith("we ") else told
    return _event(told, occurred_on, when_from=text)


def _dated(event: Finding, text: str, occurred_on: date | None) -> list[Finding]:
    """The event, named with its date when the words ground one in the episode's date.

    One belief per event: the date is part of the event's name ("pride parade (2023-08-11)"),
    so two parades on two days are two events, the same event told twice with the same date is
    one, and no second ``occurred_on`` belief repeats the date the name already carries (it
    doubled every dated event in what a person read back). An undated event keeps its bare
    name.
    """
    when = ground(text, occurred_on)
    if when is None:
        return [event]
    return [
        Finding(
            event.subject,
            event.relation,
            f"{event.object} ({when})",
            event.facet,
            event.confidence,
            event.polarity,
            event.tense,
        )
    ]


def _created(text: str, occurred_on: date | None, when_from: str | None = None) -> list[Finding]:
    """ "I finished my first screenplay": a work the speaker made, from a closed list of works."""
    match = _CREATED.match(text)
    if match is None:
        return []
    obj = strip_determiners(CLAUSE_TAIL.sub("", cut_phrase(TIME_TAIL.sub("", match.group("obj")))))
    found = words(obj)
    if not found or found[-1] not in CREATIONS:
        return []
    return _dated(Finding("I", "created", obj, tense="past"), when_from or text, occurred_on)


def _in_progress(text: str, occurred_on: date | None) -> list[Finding]:
    match = _IN_PROGRESS.match(text)
    if match is None:
        return []
    raw = _FROM_TAIL.sub("", match.group("obj") or match.group("begun"))
    obj = strip_determiners(CLAUSE_TAIL.sub("", cut_phrase(TIME_TAIL.sub("", raw))))
    found = words(obj)
    if not found or len(found) > 3 or found[-1] not in CREATIONS:
        return []
    return [Finding("I", "responsible_for", obj, tense="present")]


def _graduated(text: str, occurred_on: date | None, when_from: str | None = None) -> list[Finding]:
    """ "I graduated last week": the speaker took part in a graduation."""
    if _GRADUATED.match(text) is None:
        return []
    return _dated(
        Finding("I", "participated_in", "graduation", tense="past"), when_from or text, occurred_on
    )


def _my_trip(text: str, occurred_on: date | None) -> list[Finding]:
    """ "my trip to the Smoky Mountains last year was incredible": a past trip, dated."""
    if _MY_TRIP.search(text) is None:
        return []  # no trip named: nothing to find, whatever the tense (the cheap test first)
    if PLANNED.search(text) or not _PAST_TRIP.search(text):
        return []
    findings: list[Finding] = []
    for match in _MY_TRIP.finditer(text):
        place = strip_determiners(match.group("place"))
        trip = f"{match.group('kind')} to {place}"
        findings += _dated(Finding("I", "participated_in", trip, tense="past"), text, occurred_on)
    return findings


def _on_a_trip(text: str, occurred_on: date | None) -> list[Finding]:
    """ "I took that photo on a hike last summer": a past outing, dated when the words allow."""
    match = _ON_A_TRIP.search(text)
    if match is None or PLANNED.search(text) or not _PAST_TRIP.search(text):
        return []
    if not text.startswith("I "):
        return []
    when = ground(text, occurred_on)
    if when is None:
        return []  # "on a hike" without a date is too thin to keep
    return _dated(
        Finding("I", "participated_in", match.group("kind"), tense="past"), text, occurred_on
    )


_INDEX, (_TOLD_ANYWHERE, _OPENING) = families(
    (
        (
            *pursuits.PROPOSERS,
            *plans.PROPOSERS,
            *jobs.PROPOSERS,
            *memberships.PROPOSERS,
            *skills.PROPOSERS,
            *favourites.PROPOSERS,
            *hosting.PROPOSERS,
            *pets.PROPOSERS,
            *outings.PROPOSERS,
            *health.PROPOSERS,
            *weddings.PROPOSERS,
            *routines.ANYWHERE,
            *activities.ANYWHERE,
            _when_we,
        ),
        {
            **pursuits.TRIGGERS,
            **plans.TRIGGERS,
            **jobs.TRIGGERS,
            **memberships.TRIGGERS,
            **skills.TRIGGERS,
            **favourites.TRIGGERS,
            **hosting.TRIGGERS,
            **pets.TRIGGERS,
            **outings.TRIGGERS,
            **health.TRIGGERS,
            **weddings.TRIGGERS,
            **{reader: routines.TRIGGERS[reader] for reader in routines.ANYWHERE},
            **activities.ANYWHERE_TRIGGERS,
            _when_we: (_WHEN_WE,),
        },
    ),
    (
        (
            _event,
            _created,
            _in_progress,
            _graduated,
            _my_trip,
            _on_a_trip,
            *activities.PROPOSERS,
            *belongings.PROPOSERS,
            *routines.PROPOSERS,
        ),
        {
            _event: (_EVENT,),
            _created: (_CREATED,),
            _in_progress: (_IN_PROGRESS,),
            _graduated: (_GRADUATED,),
            _my_trip: (_MY_TRIP,),
            _on_a_trip: (_ON_A_TRIP,),
            **activities.TRIGGERS,
            **belongings.TRIGGERS,
            **{reader: routines.TRIGGERS[reader] for reader in routines.PROPOSERS},
        },
    ),
)
"""The readers that search the whole clause, whatever it opens with, and those of a clause
that opens neither with a dropped "I" nor with a time phrase: one needle index for both
(:mod:`.dispatch`)."""
