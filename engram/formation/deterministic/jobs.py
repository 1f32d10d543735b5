"""Work told in passing: a new job, a hire, a promotion, a business of one's own.

People rarely say "I work at the library"; they say what happened: "I started a new job at the
library", "I got hired as a paramedic", "I just got promoted to head chef". Each states a job
the speaker holds now (``works_at`` / ``has_role``, present). Anchored on "I" and a closed verb
phrase; a role must end in a role noun (:data:`~formation.deterministic.lexicon.ROLE_HEADS`) and
an employer is cut like any organisation. What is no current job forms nothing: a job applied
for, wanted or refused ("got a no for a summer job"), a first job or one held "when I was 16"
(a past state), and "got promoted" without a role (there is nothing to store).

A place the speaker works or volunteers at is often told in a relative clause ("the shelter I
volunteer at", "the clinic I work at"): ``works_at`` it, or ``participated_in`` "volunteering at"
it, as "I volunteer at …" forms (:mod:`.activities`).

A job ends as often as it starts, and is told as what happened: "I got laid off from the
mill", "I was let go by Acme", "I got fired from my job as a courier": no longer ``works_at``
the employer, no longer ``has_role`` the role (a retraction, present). Without an employer or a
role there is nothing to retract, and nothing forms.

A job is also told through what the speaker does with the people they work for: "I coach a
youth swim team", "I tutor high school students", "I've been teaching third graders for years",
"I spend my mornings coaching swimmers": ``has_role`` coach, tutor, teacher, trainer or
instructor. The people must be a group one is paid to teach or train (a closed list: students,
swimmers, a team, a class, …); the speaker's own children ("I teach my kids to swim") or
"myself" are no job.

A business the speaker runs is told as "my store" or "my business" inside a story ("sourcing
stock for my store was hard"): ``owns`` it, from a closed list of ventures, unless the clause is
a plan ("to open my own bakery" is :mod:`.plans`) or the venture is one the speaker only visits
("my local shop", "my favourite cafe").
"""

from __future__ import annotations

import re
from datetime import date

from engram.formation.deterministic.attributes import organisation
from engram.formation.deterministic.dispatch import Reader, Triggers
from engram.formation.deterministic.ends import words
from engram.formation.deterministic.findings import Finding
from engram.formation.deterministic.lexicon import ROLE_HEADS
from engram.formation.deterministic.nouns import closed
from engram.formation.deterministic.phrases import ADVERBS, PLANNED, TIME_TAIL
from engram.formation.deterministic.terms import object_phrase, strip_determiners

_I = r"\bI(?:'ve| have)?\s+" + ADVERBS
_JOB = (
    r"(?:a|my|the)\s+(?:(?:new|full-time|part-time|permanent|great|dream)\s+)*(?:job|position|role)"
)
_NEW_JOB = re.compile(
    _I
    + r"(?:started|began|got|landed|accepted|took|found|scored)\s+"
    + _JOB
    + r"\s+(?P<prep>at|with|as)\s+(?P<obj>[^,.;:!?]+)"
    r"|" + _I + r"(?:started|began)\s+working\s+(?P<prep2>at|for|as)\s+(?P<obj2>[^,.;:!?]+)"
    r"|" + _I + r"(?:got|was|been|get)\s+hired\s+(?P<prep3>at|by|as)\s+(?P<obj3>[^,.;:!?]+)"
)
_PROMOTED = re.compile(_I + r"(?:got|was|been|get)\s+promoted\s+to\s+(?P<role>[^,.;:!?]+)")
_PAST_JOB = re.compile(
    r"\b(?:first|summer|when I was|years ago|back (?:in|then|when)|used to|in (?:high school"
    r"|college|uni)|as a (?:kid|teen|teenager|student))\b",
    re.IGNORECASE,
)
"""A first or summer job, or one from long ago, is a past state, not the speaker's job now."""
_STUDIO_KINDS = closed("dance art photography photo recording tattoo design pottery ceramics")
"""A studio is a business only with its trade: "my dance studio", never "my studio apartment";
not a yoga or pilates studio, which people call theirs for going there."""
_MY_BUSINESS = re.compile(
    r"\b[Mm]y\s+(?:own\s+)?(?:(?P<kind>[a-z][\w-]*)\s+)?(?P<head>business|biz|store|shop|boutique"
    r"|bakery|cafe|restaurant|salon|studio)\b(?!\s+(?:owner|assistant|manager|clerk|apartment|flat"
    r"|trip|partner|partners|class|card|project|plan|idea|dream|dreams|goal|goals|school|degree"
    r"|course|travel|hours)\b)"
)
_VISITED = closed(
    """
    local favorite favourite usual regular go-to nearest neighborhood neighbourhood corner
    grocery coffee online old
    """
)
_PLACE_I_WORK_AT = re.compile(
    r"\b(?:[Tt]he|[Aa]n?)\s+(?P<place>(?:[\w'-]+\s+){0,3}?(?:shelter|hospital|school|library|center"
    r"|centre|clinic|store|shop|cafe|restaurant|museum|bakery|gym|studio|company|firm|office"
    r"|charity|nonprofit|farm|hotel|bar|garden|zoo|hospice|daycare|bookshop|bookstore|pharmacy"
    r"|warehouse|factory|lab|bank|pantry|kitchen))\s+(?:that\s+)?I\s+"
    r"(?P<verb>volunteer|work)\s+(?:at|for|in)\b(?!\s+(?:a|an|the|my|our|this|that)\b)"
)
""""the homeless shelter I volunteer at": the place, told in a relative clause."""
_LAID_OFF = re.compile(
    _I + r"(?:got|was|been|have been|'ve been)\s+(?:laid off|fired|let go|made redundant)\s+"
    r"(?:from|at|by)\s+(?:(?:my|the)\s+(?:job|position|role)\s+as\s+(?:a|an)\s+(?P<role>[^,.;:!?]+)"
    r"|(?P<org>[^,.;:!?]+))"
)
""""I got laid off from the mill": the employer (or the role) is one the speaker no longer has."""
_TEACHING_VERBS = {
    "coach": "coach",
    "coaching": "coach",
    "tutor": "tutor",
    "tutoring": "tutor",
    "teach": "teacher",
    "teaching": "teacher",
    "train": "trainer",
    "training": "trainer",
    "instruct": "instructor",
    "instructing": "instructor",
}
_PUPILS = closed(
    """
    students student pupils beginners athletes swimmers
    runners players gymnasts dancers skaters climbers cyclists boxers team teams squad class
    classes graders grade seniors clients recruits apprentices trainees novices
    """
)
"""Whom one is paid to teach or train: "I coach swimmers" is a job, "I coach my son" is not.
"kids" or "adults" alone are not on it: "I teach kids on weekends" may be a pastime."""
_TEACHES_PEOPLE = re.compile(
    r"(?:^|\bI\s+"
    + ADVERBS
    + r"|\bI(?:'ve| have)\s+been\s+"
    + ADVERBS
    + r"|\bI(?:'m| am)\s+(?:now\s+)?"
    + ADVERBS
    + r"|\bI\s+spend\s+(?:my\s+)?[a-z]+\s+)"
    r"(?P<verb>coach|tutor|teach|train|instruct|coaching|tutoring|teaching|training|instructing)"
    r"\s+(?P<who>(?:[\w-]+\s+){0,3}?(?:" + "|".join(sorted(_PUPILS)) + r"))\b",
    re.IGNORECASE,
)
_NOT_PUPILS = closed("my our his her their myself yourself your own")
_ROLE_TAIL = re.compile(r"\s+(?:in|at|on|for|with|after|before|since|last|this)\s+")
_DURATION = re.compile(r"^(?:\w+|a few|a couple of)\s+(?:days?|weeks?|months?|years?)\b", re.I)


def role(text: str) -> str | None:
    """ "a senior paramedic" → "senior paramedic"; nothing unless it ends in a role noun."""
    cut = _ROLE_TAIL.split(TIME_TAIL.sub("", text), maxsplit=1)[0]  # "editor in the spring"
    phrase = strip_determiners(object_phrase(cut))
    found = words(phrase)
    if not found or found[-1] not in ROLE_HEADS or len(found) > 4:
        return None
    return phrase


def employer(text: str) -> str | None:
    """The organisation after "at"/"by", or nothing when it is a duration ("for two years")."""
    org = organisation(TIME_TAIL.sub("", text))
    return None if not org or _DURATION.match(org) else org


def _new_job(text: str, occurred_on: date | None) -> list[Finding]:
    match = _NEW_JOB.search(text)
    if match is None or _PAST_JOB.search(text):
        return []
    prep = match.group("prep") or match.group("prep2") or match.group("prep3")
    obj = match.group("obj") or match.group("obj2") or match.group("obj3")
    if prep == "as":
        held = role(obj)
        return [Finding("I", "has_role", held, tense="present")] if held else []
    org = employer(obj)
    return [Finding("I", "works_at", org, tense="present")] if org else []


def _promoted(text: str, occurred_on: date | None) -> list[Finding]:
    match = _PROMOTED.search(text)
    held = role(match.group("role")) if match else None
    return [Finding("I", "has_role", held, tense="present")] if held else []


def _laid_off(text: str, occurred_on: date | None) -> list[Finding]:
    match = _LAID_OFF.search(text)
    if match is None:
        return []
    if match.group("role"):
        held = role(match.group("role"))
        return [Finding("I", "has_role", held, polarity="retract", tense="present")] if held else []
    org = employer(match.group("org"))
    if not org or words(org)[0] in {"job", "position", "role", "work"}:
        return []  # "laid off from work": no employer named
    return [Finding("I", "works_at", org, polarity="retract", tense="present")]


def _teaches_people(text: str, occurred_on: date | None) -> list[Finding]:
    """ "I coach a youth swim team", "teaching third graders": the role the work names."""
    match = _TEACHES_PEOPLE.search(text)
    if match is None or _PAST_JOB.search(text) or PLANNED.search(text):
        return []
    if set(words(match.group("who"))) & _NOT_PUPILS:
        return []  # "I teach my kids to swim": a parent, not a teacher
    return [Finding("I", "has_role", _TEACHING_VERBS[match.group("verb").lower()])]


def _my_business(text: str, occurred_on: date | None) -> list[Finding]:
    """ "tough times with my business", "stock for my store": a venture the speaker runs."""
    match = _MY_BUSINESS.search(text)
    if match is None or PLANNED.search(text) or match.group("kind") in _VISITED:
        return []
    kind, head = match.group("kind"), match.group("head")
    if head == "studio" and kind not in _STUDIO_KINDS:
        return []  # "my studio" alone may be a flat or a room; a dance studio is a business
    head = "business" if head == "biz" else head  # "running my biz" is a business
    business = f"{kind} {head}" if kind else head
    return [Finding("I", "owns", business, tense="present")]


def _place_i_work_at(text: str, occurred_on: date | None) -> list[Finding]:
    match = _PLACE_I_WORK_AT.search(text)
    if match is None:
        return []
    place = strip_determiners(match.group("place"))
    if match.group("verb") == "work":
        return [Finding("I", "works_at", place, tense="present")]
    return [Finding("I", "participated_in", f"volunteering at {place}", tense="present")]


PROPOSERS: tuple[Reader, ...] = (
    _new_job,
    _promoted,
    _laid_off,
    _teaches_people,
    _my_business,
    _place_i_work_at,
)

TRIGGERS: Triggers = {
    _new_job: (_NEW_JOB,),
    _promoted: (_PROMOTED,),
    _laid_off: (_LAID_OFF,),
    _teaches_people: (_TEACHES_PEOPLE,),
    _my_business: (_MY_BUSINESS,),
    _place_i_work_at: (_PLACE_I_WORK_AT,),
}
"""For each reader, the patterns one of which must match a clause for it to find anything
(:mod:`.dispatch` skips it otherwise)."""
