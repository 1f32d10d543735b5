"""Past events, ongoing activities and job changes: what real people tell about their lives.

"I ran a half marathon last Saturday" is a durable fact about a person: an event they took
part in, with a date. It forms as (I, participated_in, half marathon), past tense (an event
relation, so admission keeps it), and, when the episode's date grounds "last Saturday", as
(half marathon, occurred_on, 2023-05-06). The event must be named by a known event noun
("race", "workshop", "parade", …): "I went to a lot of trouble" is no event. Ongoing
activities ("I've been doing kickboxing lately") are present participation; taking something
up ("I took up archery") is learning it; losing or leaving a job retracts the role.
"""

from __future__ import annotations

import re
from datetime import date

from formation.deterministic.dates import ground
from formation.deterministic.ends import words
from formation.deterministic.findings import Finding
from formation.deterministic.nouns import (
    ACTIVITY_HEADS,
    CREATIONS,
    EVENT_HEADS,
    HOBBY_GERUNDS,
    NOT_ACTIVITIES,
    OWNABLE_HEADS,
    PET_HEADS,
    SPORTS,
    VAGUE_EVENTS,
)
from formation.deterministic.terms import cut_phrase, strip_determiners

_ADVERBS = (
    r"(?:(?:just|finally|recently|also|actually|even|once|officially|definitely|really|still)\s+)*"
)
_EVENT_VERBS = (
    r"went to|went on|attended|ran|ran in|did|completed|competed in|took part in"
    r"|participated in|volunteered at|volunteered for|joined|gave|hosted|organi[sz]ed|led"
    r"|took|visited|played in|performed at|performed in|signed up for|entered|won|spoke at"
    r"|got back from|came back from|was at|went on"
)
_EVENT = re.compile(
    r"^I\s+" + _ADVERBS + r"(?P<verb>" + _EVENT_VERBS + r")\s+(?P<obj>.+)$", re.IGNORECASE
)
_SUPERLATIVE = re.compile(
    r"^(?:(?:most|best|worst|coolest|greatest|biggest|craziest|wildest|funniest|nicest"
    r"|loveliest|sweetest|weirdest|strangest|longest|hardest|toughest|largest|smallest"
    r"|proudest|happiest|saddest|scariest)\s+)+(?=\w)",
    re.IGNORECASE,
)
"""The "coolest" in "the coolest Harry Potter party" says how it was, not what it was."""
_EVENT_CUT = re.compile(
    r"\s+(?:to|for|with|about|because|where|which|that|who|and|but|so|when|while|after|before"
    r"|since|during|as)\s.*$",
    re.IGNORECASE,
)
_WHEN = re.compile(
    r"\s+(?:yesterday|today|tonight|last\s+\w+|last\s+night|this\s+(?:morning|afternoon|week|weekend|month"
    r"|year|spring|summer|fall|autumn|winter)|(?:a few|a couple of|several|\w+)\s+(?:days?|weeks?"
    r"|months?|years?)\s+ago|recently|lately|these days|nowadays|now|again|in\s+(?:january|february"
    r"|march|april|may|june|july|august|september|october|november|december|spring|summer"
    r"|autumn|fall|winter|\d{4})|on weekends|on \w+days|every \w+)\b.*$",
    re.IGNORECASE,
)
_ONGOING = re.compile(
    r"^I(?:'ve| have)\s+been\s+(?:doing|practi[sc]ing|playing|taking)\s+(?P<obj>.+)$"
    r"|^I(?:'m| am)\s+(?:doing|practi[sc]ing)\s+(?P<now>.+?)\s+(?:these days|lately|nowadays"
    r"|regularly|every (?:week|day|morning|evening|weekend))\b"
)
_TOOK_UP = re.compile(
    r"^I(?:'ve| have)?\s+" + _ADVERBS + r"(?:(?:took up|taken up|got into|gotten into|picked up)\s+"
    r"(?:doing\s+|taking\s+|learning\s+|practi[sc]ing\s+)?(?P<obj>.+)"
    r"|started\s+(?:doing\s+|taking\s+|learning\s+|practi[sc]ing\s+|going to\s+)?(?P<named>.+))$"
)
_LEFT_JOB = re.compile(
    r"^(?:I\s+)?" + _ADVERBS + r"(?:lost|quit|left)\s+my\s+(?:job|position|post)\s+as\s+(?:a|an)\s+"
    r"(?P<role>.+)$",
    re.IGNORECASE,
)
_TEACH = re.compile(r"^I\s+(?:also\s+)?teach\s+(?P<what>[A-Za-z][\w-]*(?:\s+[\w-]+)?)")
_ADOPTED = re.compile(
    r"^I\s+" + _ADVERBS + r"(?:adopted|rescued|got|brought home)\s+(?:a|an|two|three)\s+"
    r"(?P<obj>[\w-]+(?:\s+[\w-]+)?)"
)
_HOBBY_NOW = re.compile(
    r"^I(?:'ve| have)\s+"
    + _ADVERBS
    + r"been\s+(?:really\s+|busy\s+)?(?P<obj>[a-z]+ing)\b(?!\s+(?:to|for|on|at)\b)"
)
_PLAY = re.compile(r"^I\s+(?:also\s+|still\s+|often\s+|regularly\s+)?play\s+(?P<obj>[\w -]+)")
_LEARNING_SUBJECT = re.compile(
    r"^(?:Learning|Studying)\s+(?P<obj>[A-Z][a-z]+|[a-z]+)\s+(?:has been|is|was|has)\b"
)
_OFF_TO = re.compile(
    r"^I(?:'m| am)\s+(?:off|heading|headed)\s+to\s+(?:do\s+(?:some\s+)?|my\s+)?(?P<obj>[\w-]+)"
    r"(?:\s+(?:class|practice|lesson|session|training))?\b"
)
_ON_A_TRIP = re.compile(
    r"\bon\s+(?:a|my|our)\s+(?P<kind>(?:road |camping |fishing |hiking |ski )?trip|hike|cruise"
    r"|vacation|holiday|run|bike ride|ride)\b(?!\s+to\b)"
)
_NAME_MY_PET = re.compile(r"\b[A-Z][a-z]+,\s+my\s+(?P<pet>guinea pig|[a-z]+)\b")
_VOLUNTEER = re.compile(
    r"^I(?:'m| am)?\s+" + _ADVERBS + r"(?:still\s+|carrying on\s+)?volunteer(?:ing|s)?"
    r"(?:\s+as\s+(?:a|an)\s+[\w-]+)?\s+(?P<prep>at|for|with)\s+(?P<org>.+)$"
)
_PASSION = re.compile(
    r"^(?P<what>[A-Za-z]+ing|[A-Z][a-z]+)\s+(?:has always been|has been|is|was|'s)\s+"
    r"(?:a|my|the)\s+(?:real\s+|true\s+|big\s+|first\s+|biggest\s+|greatest\s+)?"
    r"(?:passion|hobby|thing)(?:\s+of mine)?\b"
    r"|^[Mm]y\s+(?:real\s+|true\s+|big\s+|biggest\s+)?(?:passion|hobby)\s+is\s+(?P<named>.+)$"
)
_MY_TRIP = re.compile(
    r"\b[Mm]y\s+(?:recent\s+|last\s+|first\s+)?(?P<kind>trip|vacation|holiday|visit|journey)"
    r"\s+to\s+(?P<place>(?:the\s+)?[A-Z][\w'-]*(?:\s+[A-Z][\w'-]*){0,3})"
)
_PAST_TRIP = re.compile(
    r"\b(?:was|were|took|snapped|went|had|visited|loved|ago|last\s+\w+|yesterday)\b", re.I
)
_MY_PET = re.compile(
    r"\b[Mm]y\s+(?:(?:new|little|old|sweet)\s+)?(?P<pet>[a-z]+)\s+(?:named\s+|called\s+)?[A-Z][a-z]"
)
_MY_NEW = re.compile(r"\b[Mm]y\s+(?:(?:brand[- ])?new|own)\s+(?P<obj>[\w-]+(?:\s+[\w-]+){0,2})")
_PLANNED = re.compile(
    r"\b(?:gonna|going to|will|'ll|plan\w*|want\w*|hop\w+|someday|start\w*|open\w*"
    r"|buy\w*|get|getting|save|saving|need|looking for|search\w*)\b",
    re.IGNORECASE,
)
_LEAD_TIME = re.compile(
    r"^(?:(?:last|this|earlier this)\s+\w+|yesterday|today|earlier today|on\s+\w+day"
    r"|(?:a few|a couple of|\w+)\s+(?:days|weeks|months|years)\s+ago),?\s+(?=I\s)",
    re.IGNORECASE,
)
_GRADUATED = re.compile(r"^I\s+" + _ADVERBS + r"graduated\b")
_CREATED = re.compile(
    r"^I\s+" + _ADVERBS + r"(?:finished|wrote|completed|published|recorded|painted|made|built"
    r"|knitted|released|launched)\s+(?:writing\s+|painting\s+|recording\s+)?(?:my|a|an)\s+"
    r"(?P<obj>.+)$"
)
_HOBBY = re.compile(r"\b[Mm]y\s+(?P<obj>(?:[\w-]+\s+){0,2}[\w-]+)\s+hobby\b")


def propose_events(text: str, occurred_on: date | None) -> list[Finding]:
    """Every event, activity, job change and new possession the clause states.

    A leading time phrase ("Last week, I went to …") is set aside for matching; the date is
    still grounded from the whole clause.
    """
    findings: list[Finding] = []
    if _LEAD_TIME.match(text):
        stripped = _LEAD_TIME.sub("", text)
        return [
            *_event(stripped, occurred_on, when_from=text),
            *_created(stripped, occurred_on, when_from=text),
            *_graduated(stripped, occurred_on, when_from=text),
        ]
    for propose in (
        _event,
        _ongoing,
        _took_up,
        _left_job,
        _teach,
        _adopted,
        _my_new,
        _hobby_now,
        _play,
        _my_pet,
        _hobby,
        _created,
        _graduated,
        _volunteer,
        _passion,
        _my_trip,
        _learning_subject,
        _off_to,
        _on_a_trip,
    ):
        findings += propose(text, occurred_on)
    return findings


def _event(text: str, occurred_on: date | None, when_from: str | None = None) -> list[Finding]:
    match = _EVENT.match(text)
    if match is None:
        return []
    obj = strip_determiners(_EVENT_CUT.sub("", cut_phrase(_WHEN.sub("", match.group("obj")))))
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


def _dated(event: Finding, text: str, occurred_on: date | None) -> list[Finding]:
    """The event, and its date when the words ground one in the episode's date.

    ``occurred_on`` is single-valued per subject and entities merge by name, so a one-word
    event ("hike", "graduation") gets no date claim: every hike would share one date.
    """
    when = ground(text, occurred_on)
    if when is None or len(words(event.object)) < 2:
        return [event]  # "hike occurred_on 2023" would merge every hike: only named events
    return [event, Finding(event.object, "occurred_on", when, tense="past")]


def _activity(raw: str, *, gerunds: bool = True) -> str | None:
    obj = strip_determiners(cut_phrase(_WHEN.sub("", raw)))
    found = words(obj)
    if not found or len(found) > 3 or found[0] in NOT_ACTIVITIES:
        return None
    head = found[-1]
    gerund = gerunds and head.endswith("ing") and len(head) > 5
    return obj if head in ACTIVITY_HEADS or gerund else None


def _ongoing(text: str, occurred_on: date | None) -> list[Finding]:
    match = _ONGOING.match(text)
    if match is None:
        return []
    obj = _activity(match.group("obj") or match.group("now"))
    return [Finding("I", "participated_in", obj, tense="present")] if obj else []


def _took_up(text: str, occurred_on: date | None) -> list[Finding]:
    match = _TOOK_UP.match(text)
    if match is None:
        return []
    if match.group("named") is not None:  # "started caring more" is no activity: name it
        obj = _activity(match.group("named"), gerunds=False)
    else:
        obj = _activity(match.group("obj"))
    return [Finding("I", "learning", obj, tense="present")] if obj else []


def _left_job(text: str, occurred_on: date | None) -> list[Finding]:
    match = _LEFT_JOB.match(text)
    if match is None:
        return []
    role = strip_determiners(cut_phrase(match.group("role")))
    role = re.split(r"\s+(?:at|in|for|with|on)\s+", role, maxsplit=1)[0]
    if not role or len(words(role)) > 3:
        return []
    return [Finding("I", "has_role", role, polarity="retract", tense="present")]


def _teach(text: str, occurred_on: date | None) -> list[Finding]:
    match = _TEACH.match(text)
    if match is None:
        return []
    found = words(match.group("what"))
    subject = found[0]
    if subject in NOT_ACTIVITIES or subject in {"my", "our", "the", "a", "an", "at", "in"}:
        return []
    return [Finding("I", "has_role", f"{subject} teacher")]


def _adopted(text: str, occurred_on: date | None) -> list[Finding]:
    match = _ADOPTED.match(text)
    if match is None:
        return []
    found = words(match.group("obj"))
    for size in (2, 1):
        if len(found) >= size and found[size - 1] in PET_HEADS:
            return [Finding("I", "owns", " ".join(found[:size]), tense="present")]
    return []


def _my_new(text: str, occurred_on: date | None) -> list[Finding]:
    """ "my new hatchback", "my own studio": a possession, unless the clause is a plan."""
    if _PLANNED.search(text):
        return []
    findings: list[Finding] = []
    for match in _MY_NEW.finditer(text):
        found = words(match.group("obj"))
        for size in (3, 2, 1):
            if len(found) >= size and found[size - 1] in OWNABLE_HEADS:
                findings.append(Finding("I", "owns", " ".join(found[:size]), tense="present"))
                break
    return findings


def _hobby_now(text: str, occurred_on: date | None) -> list[Finding]:
    """ "I've been painting a lot lately": an ongoing hobby, from a closed list of hobbies."""
    match = _HOBBY_NOW.match(text)
    if match is None or match.group("obj").lower() not in HOBBY_GERUNDS:
        return []
    return [Finding("I", "participated_in", match.group("obj").lower(), tense="present")]


def _play(text: str, occurred_on: date | None) -> list[Finding]:
    """ "I play volleyball on Sundays": a sport or game the speaker plays."""
    match = _PLAY.match(text)
    if match is None:
        return []
    found = words(cut_phrase(match.group("obj")))
    if not found or found[0] not in SPORTS:
        return []
    return [Finding("I", "participated_in", found[0], tense="present")]


def _my_pet(text: str, occurred_on: date | None) -> list[Finding]:
    """ "my dog Max", "my cat named Luna": the speaker has the pet (the name is the pet's)."""
    matches = [*_MY_PET.finditer(text), *_NAME_MY_PET.finditer(text)]
    return [
        Finding("I", "owns", match.group("pet"), tense="present")
        for match in matches
        if match.group("pet") in PET_HEADS
    ]


def _volunteer(text: str, occurred_on: date | None) -> list[Finding]:
    """ "I'm volunteering at the youth centre": an ongoing activity, written as told."""
    match = _VOLUNTEER.match(text)
    if match is None:
        return []
    org = strip_determiners(_EVENT_CUT.sub("", cut_phrase(_WHEN.sub("", match.group("org")))))
    if not org or len(words(org)) > 4:
        return []
    activity = f"volunteering {match.group('prep').lower()} {org}"
    return [Finding("I", "participated_in", activity, tense="present")]


def _hobby(text: str, occurred_on: date | None) -> list[Finding]:
    """ "my fantasy reading hobby": what the speaker calls a hobby interests them."""
    findings: list[Finding] = []
    for match in _HOBBY.finditer(text):
        kept = [w for w in words(match.group("obj")) if w not in _HOBBY_FILLER]
        if kept:
            findings.append(Finding("I", "interested_in", " ".join(kept)))
    return findings


_HOBBY_FILLER = frozenset({"new", "favorite", "favourite", "main", "only", "latest", "own", "old"})


def _created(text: str, occurred_on: date | None, when_from: str | None = None) -> list[Finding]:
    """ "I finished my first screenplay": a work the speaker made, from a closed list of works."""
    match = _CREATED.match(text)
    if match is None:
        return []
    obj = strip_determiners(_EVENT_CUT.sub("", cut_phrase(_WHEN.sub("", match.group("obj")))))
    found = words(obj)
    if not found or found[-1] not in CREATIONS:
        return []
    return _dated(Finding("I", "created", obj, tense="past"), when_from or text, occurred_on)


def _graduated(text: str, occurred_on: date | None, when_from: str | None = None) -> list[Finding]:
    """ "I graduated last week": the speaker took part in a graduation."""
    if _GRADUATED.match(text) is None:
        return []
    return _dated(
        Finding("I", "participated_in", "graduation", tense="past"), when_from or text, occurred_on
    )


def _passion(text: str, occurred_on: date | None) -> list[Finding]:
    """ "Writing has always been a passion of mine", "my passion is pottery": an interest.
    "Acting was my first passion" is a past one: proposed in the past, so it is refused."""
    match = _PASSION.match(text)
    if match is None:
        return []
    what = match.group("what") or _activity(match.group("named") or "")
    if not what or what.lower() in {"it", "this", "that", "what", "everything", "nothing"}:
        return []
    tense = "past" if re.search(r"\bwas\b", match.group()) else "present"
    return [Finding("I", "interested_in", what.lower(), tense=tense)]


def _my_trip(text: str, occurred_on: date | None) -> list[Finding]:
    """ "my trip to the Smoky Mountains last year was incredible": a past trip, dated."""
    if _PLANNED.search(text) or not _PAST_TRIP.search(text):
        return []
    findings: list[Finding] = []
    for match in _MY_TRIP.finditer(text):
        place = strip_determiners(match.group("place"))
        trip = f"{match.group('kind')} to {place}"
        findings += _dated(Finding("I", "participated_in", trip, tense="past"), text, occurred_on)
    return findings


def _learning_subject(text: str, occurred_on: date | None) -> list[Finding]:
    """ "Learning German has been tough": the speaker is learning German."""
    match = _LEARNING_SUBJECT.match(text)
    if match is None or match.group("obj").lower() in NOT_ACTIVITIES:
        return []
    return [Finding("I", "learning", match.group("obj"), tense="present")]


def _off_to(text: str, occurred_on: date | None) -> list[Finding]:
    """ "I'm off to do some taekwondo": an activity the speaker does (a closed list)."""
    match = _OFF_TO.match(text)
    if match is None or match.group("obj").lower() not in ACTIVITY_HEADS:
        return []
    return [Finding("I", "participated_in", match.group("obj").lower(), tense="present")]


def _on_a_trip(text: str, occurred_on: date | None) -> list[Finding]:
    """ "I took that photo on a hike last summer": a past outing, dated when the words allow."""
    match = _ON_A_TRIP.search(text)
    if match is None or _PLANNED.search(text) or not _PAST_TRIP.search(text):
        return []
    if not text.startswith("I "):
        return []
    when = ground(text, occurred_on)
    if when is None:
        return []  # "on a hike" without a date is too thin to keep
    return _dated(
        Finding("I", "participated_in", match.group("kind"), tense="past"), text, occurred_on
    )
