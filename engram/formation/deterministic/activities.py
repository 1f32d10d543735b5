"""Ongoing activities, interests and jobs, as people tell them in conversation.

"I've been doing kickboxing lately" and "I play volleyball on Sundays" are present
participation; "I took up archery" is learning it; "Writing has always been a passion of mine"
and "my birdwatching hobby" are interests; "I lost my job as an accountant" retracts the role
and "I teach pilates" states one. Activities come from closed lists or are gerunds: "I've been
doing great" and "I started caring less" are no activity.
"""

from __future__ import annotations

import re
from datetime import date

from engram.formation.deterministic.dispatch import Reader, Triggers
from engram.formation.deterministic.ends import words
from engram.formation.deterministic.findings import Finding
from engram.formation.deterministic.lexicon import LANGUAGE_NAMES
from engram.formation.deterministic.nouns import (
    ACTIVITY_HEADS,
    HOBBY_GERUNDS,
    NOT_ACTIVITIES,
    SPORTS,
    TAUGHT_SUBJECTS,
)
from engram.formation.deterministic.phrases import ADVERBS, CLAUSE_TAIL, TIME_TAIL
from engram.formation.deterministic.terms import cut_phrase, strip_determiners
from engram.formation.screening import screened

_ONGOING = re.compile(
    r"^I(?:'ve| have)\s+been\s+(?:doing|practi[sc]ing|playing|taking)\s+(?P<obj>.+)$"
    r"|^I(?:'m| am)\s+(?:doing|practi[sc]ing)\s+(?P<now>.+?)\s+(?:these days|lately|nowadays"
    r"|regularly|every (?:week|day|morning|evening|weekend))\b"
    r"|^I(?:'m| am)\s+(?:(?:also|still|now)\s+)?(?:doing|practi[sc]ing)\s+(?P<head>[\w-]+)\b"
    r"(?!\s+(?:to|for|of|on|at)\b)"
)
""""I've been doing kickboxing", "I'm doing pilates these days", "I'm doing kickboxing and it's
great" (a bare activity of the closed list: "I'm doing great" or "I'm doing well" is none)."""
_TOOK_UP = re.compile(
    r"^I(?:'ve| have)?\s+" + ADVERBS + r"(?:(?:took up|taken up|got into|gotten into|picked up)\s+"
    r"(?:doing\s+|taking\s+|learning\s+|practi[sc]ing\s+)?(?P<obj>.+)"
    r"|started\s+(?:doing\s+|taking\s+|learning\s+(?:how\s+)?to\s+play\s+|learning\s+"
    r"|practi[sc]ing\s+|going to\s+|playing\s+)?(?P<named>.+))$"
)
_LEFT_JOB = re.compile(
    r"^(?:I\s+)?" + ADVERBS + r"(?:lost|quit|left)\s+my\s+(?:job|position|post)\s+as\s+(?:a|an)\s+"
    r"(?P<role>.+)$",
    re.IGNORECASE,
)
_TEACH = re.compile(r"^I\s+(?:also\s+)?teach\s+(?P<what>[A-Za-z][\w-]*(?:\s+[\w-]+)?)")
_HOBBY_NOW = re.compile(
    r"^I(?:'ve| have)\s+"
    + ADVERBS
    + r"been\s+(?:really\s+|busy\s+)?(?P<obj>[a-z]+ing)\b(?!\s+(?:to|for|on|at)\b)"
)
_PLAY = re.compile(r"^I\s+(?:also\s+|still\s+|often\s+|regularly\s+)?play\s+(?P<obj>[\w -]+)")
_LANGUAGE_LESSONS = screened(
    r"\b[Mm]y\s+(?P<language>[A-Z][a-z]+)\s+(?:lessons|classes|class|course|studies|tutor)\b"
)
""""I'm going to keep up with my German lessons": the speaker is learning German (a language
of the closed list)."""
_LEARNING_SUBJECT = re.compile(
    r"^(?:Learning|Studying)\s+(?P<obj>[A-Z][a-z]+|[a-z]+)\s+(?:has been|is|was|has)\b"
)
_OFF_TO = re.compile(
    r"^I(?:'m| am)\s+(?:off|heading|headed)\s+to\s+(?:do\s+(?:some\s+)?|my\s+)?(?P<obj>[\w-]+)"
    r"(?:\s+(?:class|practice|lesson|session|training))?\b"
)
_VOLUNTEER = re.compile(
    r"^I(?:'m| am|'ve been| have been)?\s+" + ADVERBS + r"(?:still\s+|carrying on\s+|busy\s+"
    r"|(?:had|got)\s+(?:the\s+(?:chance|opportunity)\s+)?to\s+)?"
    r"volunteer(?:ing|s)?"
    r"(?:\s+as\s+(?:a|an)\s+[\w-]+)?\s+(?P<prep>at|for|with)\s+(?P<org>.+)$"
)
_PASSION = re.compile(
    r"^(?P<what>[A-Za-z]+ing|[A-Z][a-z]+)\s+(?:has always been|has been|is|was|'s)\s+"
    r"(?:a|my|the)\s+(?:real\s+|true\s+|big\s+|first\s+|biggest\s+|greatest\s+)?"
    r"(?:passion|hobby|thing)(?:\s+of mine)?\b"
    r"|^[Mm]y\s+(?:real\s+|true\s+|big\s+|biggest\s+)?(?:passion|hobby)\s+is\s+(?P<named>.+)$"
    r"|^(?P<part>[A-Za-z]+ing)(?:\s+(?:is|has\s+(?:always\s+)?been)|'s)\s+(?:(?:such\s+)?(?:a\s+)?"
    r"(?:huge|big|massive|important|major)\s+part\s+of\s+)?my\s+life\b"
)
""""Writing has always been a passion of mine", "my passion is pottery", "Dancing is my life",
"Writing's such a huge part of my life": an interest (a gerund, for the last two)."""
_HOBBY = screened(r"\b[Mm]y\s+(?P<obj>(?:[\w-]+\s+){0,2}[\w-]+)\s+hobby\b")
_HOBBY_FILLER = frozenset({"new", "favorite", "favourite", "main", "only", "latest", "own", "old"})


def _activity(raw: str, *, gerunds: bool = True) -> str | None:
    obj = strip_determiners(cut_phrase(TIME_TAIL.sub("", raw)))
    found = words(obj)
    if not found or len(found) > 3 or found[0] in NOT_ACTIVITIES:
        return None
    head = found[-1]
    gerund = (gerunds and head.endswith("ing") and len(head) > 5) or head in HOBBY_GERUNDS
    return obj if head in ACTIVITY_HEADS or gerund else None


def _ongoing(text: str, occurred_on: date | None) -> list[Finding]:
    match = _ONGOING.match(text)
    if match is None:
        return []
    if match.group("head") is not None:
        head = match.group("head").lower()
        return (
            [Finding("I", "participated_in", head, tense="present")]
            if head in ACTIVITY_HEADS
            else []
        )
    obj = _activity(match.group("obj") or match.group("now"))
    return [Finding("I", "participated_in", obj, tense="present")] if obj else []


def took_up(text: str, occurred_on: date | None) -> list[Finding]:
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
    subject = words(match.group("what"))[0]
    if subject not in ACTIVITY_HEADS | SPORTS | TAUGHT_SUBJECTS | LANGUAGE_WORDS:
        return []  # "I teach kids", "I teach myself guitar": no subject taught
    taught = subject.capitalize() if subject in LANGUAGE_WORDS else subject
    return [Finding("I", "has_role", f"{taught} teacher")]


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


def _language_lessons(text: str, occurred_on: date | None) -> list[Finding]:
    match = _LANGUAGE_LESSONS.search(text)
    if match is None or match.group("language").lower() not in LANGUAGE_WORDS:
        return []
    return [Finding("I", "learning", match.group("language"), tense="present")]


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


def _volunteer(text: str, occurred_on: date | None) -> list[Finding]:
    """ "I'm volunteering at the youth centre": an ongoing activity, written as told."""
    match = _VOLUNTEER.match(text)
    if match is None:
        return []
    org = strip_determiners(CLAUSE_TAIL.sub("", cut_phrase(TIME_TAIL.sub("", match.group("org")))))
    if not org or len(words(org)) > 4 or set(words(org)) & _NOT_PLACES:
        return []
    activity = f"volunteering {match.group('prep').lower()} {org}"
    return [Finding("I", "participated_in", activity, tense="present")]


def _passion(text: str, occurred_on: date | None) -> list[Finding]:
    """ "Writing has always been a passion of mine", "my passion is pottery": an interest.
    "Acting was my first passion" is a past one: proposed in the past, so it is refused."""
    match = _PASSION.match(text)
    if match is None:
        return []
    what = match.group("what") or match.group("part") or _activity(match.group("named") or "")
    if not what or what.lower() in {"it", "this", "that", "what", "everything", "nothing"}:
        return []
    tense = "past" if re.search(r"\bwas\b", match.group()) else "present"
    return [Finding("I", "interested_in", what.lower(), tense=tense)]


def _hobby(text: str, occurred_on: date | None) -> list[Finding]:
    """ "my fantasy reading hobby": what the speaker calls a hobby interests them."""
    findings: list[Finding] = []
    for match in _HOBBY.finditer(text):
        kept = [w for w in words(match.group("obj")) if w not in _HOBBY_FILLER]
        if kept:
            findings.append(Finding("I", "interested_in", " ".join(kept)))
    return findings


LANGUAGE_WORDS = frozenset(name.lower() for name in LANGUAGE_NAMES)
_NOT_PLACES = frozenset({"time", "while", "first", "moment", "now", "fun", "free", "once"})
"""Words that make "volunteering for …" a when, not a where ("for the first time")."""

PROPOSERS: tuple[Reader, ...] = (
    _ongoing,
    took_up,
    _left_job,
    _teach,
    _hobby_now,
    _play,
    _hobby,
    _volunteer,
    _passion,
    _learning_subject,
    _off_to,
)

TRIGGERS: Triggers = {
    _ongoing: (_ONGOING,),
    took_up: (_TOOK_UP,),
    _left_job: (_LEFT_JOB,),
    _teach: (_TEACH,),
    _hobby_now: (_HOBBY_NOW,),
    _play: (_PLAY,),
    _hobby: (_HOBBY,),
    _volunteer: (_VOLUNTEER,),
    _passion: (_PASSION,),
    _learning_subject: (_LEARNING_SUBJECT,),
    _off_to: (_OFF_TO,),
}
"""For each reader, the patterns one of which must match a clause for it to find anything
(:mod:`.dispatch` skips it otherwise)."""


ANYWHERE: tuple[Reader, ...] = (_language_lessons,)
"""Readers that search the whole clause."""
ANYWHERE_TRIGGERS: Triggers = {_language_lessons: (_LANGUAGE_LESSONS,)}
