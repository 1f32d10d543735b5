"""User attributes told with a verb: home, employer, role, languages, learning, intent, name."""

from __future__ import annotations

import re

from engram.formation.deterministic.findings import WEAK_CONFIDENCE, Finding
from engram.formation.deterministic.lexicon import LANGUAGE_NAMES, ROLE_HEADS
from engram.formation.deterministic.predicate import Predicate
from engram.formation.deterministic.terms import (
    leading_name,
    name_list,
    object_list,
    object_phrase,
)

_MONTHS = "january|february|march|april|may|june|july|august|september|october|november|december"
_PLACE_TAIL = re.compile(
    r"\s+(?:(?:with|and|near|for|since|where|because|but|as)\s+|in\s+(?:"
    + _MONTHS
    + r"|\d{4}|the (?:spring|summer|autumn|fall|winter))\b).*$",
    re.I,
)
_ORG_TAIL = re.compile(r"\s+(?:as|and|in|on|since|for|where|because|but|doing)\s+.*$", re.I)
_GROUPS = re.compile(
    r"\b(?:team|group|club|committee|guild|squad|board|chapter|community|brigade|league|band"
    r"|choir|orchestra|society|association|organi[sz]ation|network|circle|crew|union|collective)\b"
)
_DURATION = re.compile(r"(?:\w+|a few|a couple of)\s+(?:days?|weeks?|months?|years?)\b", re.I)
_GROUP_ONLY = re.compile(r"(?:the|my|our|a)\s+(?:team|club|group|squad|band)\b", re.I)
_NOT_A_GROUP = re.compile(
    r"\b(?:group|team|crew|band)\s+(?:of|chat)\b|^(?:friend|family)\s+group\b"
)
_LANGUAGE_LEAD = re.compile(r"^(?:fluent|native|basic|some|a (?:bit|little) of|a little)\s+", re.I)


def place(text: str) -> str:
    return object_phrase(_PLACE_TAIL.sub("", text))


def organisation(text: str) -> str:
    return object_phrase(_ORG_TAIL.sub("", text))


def role_phrase(text: str) -> tuple[str, str | None] | None:
    """A role noun phrase ("a senior data engineer at Acme") and its employer, if any."""
    match = re.match(r"(?:a|an)\s+(?P<role>.+?)(?:\s+(?:at|for|with)\s+(?P<org>.+))?$", text, re.I)
    if match is None:
        return None
    role = object_phrase(match.group("role"))
    words = role.lower().split()
    if not words or words[-1] not in ROLE_HEADS:
        return None
    org = match.group("org")
    if org and (_DURATION.match(org) or _GROUP_ONLY.match(org)):
        return role, None  # "a tutor for two years", "a guard for the team": not an employer
    return role, organisation(org) if org else None


def propose_home(predicate: Predicate) -> list[Finding]:
    rest = predicate.rest
    if predicate.lemma == "live":
        match = re.match(r"in\s+(.+)$", rest, re.I)
        return [Finding(predicate.subject, "lives_in", place(match.group(1)))] if match else []
    match = re.match(
        r"(?:(?:back|here|over)\s+)?(?:from\s+(?P<old>.+?)\s+)?to\s+(?P<new>.+)$", rest, re.I
    )
    if match is None:
        return []
    arrived = predicate.form == "past" or predicate.perfect
    tense = "present" if arrived else "future"
    findings = [Finding(predicate.subject, "lives_in", place(match.group("new")), tense=tense)]
    if match.group("old") and arrived:
        findings.append(
            Finding(
                predicate.subject,
                "lives_in",
                place(match.group("old")),
                polarity="retract",
                tense="present",
            )
        )
    return findings


_PURPOSE = re.compile(r"\s+(?:to|so\s+(?:that\s+)?I\s+can)\s+[a-z]+\b.*$")
"""What a thing worked on is for ("… to show off the studio") is no part of its name."""


def propose_work(predicate: Predicate) -> list[Finding]:
    rest, subject = predicate.rest, predicate.subject
    match = re.match(r"(?P<prep>at|for|as|with|on)\s+(?P<obj>.+)$", rest, re.I)
    if match is None:
        return []
    prep, obj = match.group("prep").lower(), match.group("obj")
    if prep in {"at", "for"}:
        org = organisation(obj)
        return (
            [] if org.lower() in {"myself", "me", "home"} else [Finding(subject, "works_at", org)]
        )
    if prep == "as":
        role = role_phrase(obj)
        if role is None:
            return []
        findings = [Finding(subject, "has_role", role[0])]
        return findings + ([Finding(subject, "works_at", role[1])] if role[1] else [])
    if prep == "with":
        people = name_list(obj) or object_list(obj)
        return [Finding(subject, "works_with", person) for person in people]
    obj = _PURPOSE.sub("", obj)  # "an online platform to show off the studio": the platform
    return [Finding(subject, "responsible_for", object_phrase(obj), confidence=WEAK_CONFIDENCE)]


def propose_join(predicate: Predicate) -> list[Finding]:
    """A group joined is a membership; a named organisation joined is an employer; an event
    joined ("a chess tournament") is left to :mod:`.events`, and anything else forms nothing."""
    if predicate.form != "past" and not predicate.perfect:
        return []
    obj = organisation(predicate.rest)
    if _NOT_A_GROUP.search(obj.lower()):
        return []  # "a group of tourists", "a family group chat": a crowd or a chat
    if _GROUPS.search(obj.lower()):
        return [Finding(predicate.subject, "member_of", obj, tense="present")]
    if obj[:1].isupper() and not predicate.rest.lower().startswith(("a ", "an ", "the ")):
        return [Finding(predicate.subject, "works_at", obj, tense="present")]
    return []


def languages(text: str) -> list[str]:
    found: list[str] = []
    for item in object_list(_LANGUAGE_LEAD.sub("", text)):
        item = _LANGUAGE_LEAD.sub("", item)
        if item.lower().split()[0] in LANGUAGE_NAMES:
            found.append(item)
    return found


def propose_speaks(predicate: Predicate) -> list[Finding]:
    return [Finding(predicate.subject, "speaks", lang) for lang in languages(predicate.rest)]


def propose_learning(predicate: Predicate) -> list[Finding]:
    if predicate.rest.lower().startswith(("to ", "about ", "that ", "how ")):
        return []
    return [Finding(predicate.subject, "learning", item) for item in object_list(predicate.rest)]


def propose_intent(predicate: Predicate) -> list[Finding]:
    match = re.match(r"(?:on\s+|to\s+)(.+)$", predicate.rest, re.I)
    if match is None:
        return []
    return [Finding(predicate.subject, "intends_to", object_phrase(match.group(1)))]


def propose_goes_by(predicate: Predicate) -> list[Finding]:
    match = re.match(r"by\s+(.+)$", predicate.rest, re.I)
    name = leading_name(match.group(1)) if match else None
    return [Finding(predicate.subject, "has_name", name)] if name else []


HANDLERS = {
    "live": propose_home,
    "move": propose_home,
    "relocate": propose_home,
    "work": propose_work,
    "join": propose_join,
    "speak": propose_speaks,
    "learn": propose_learning,
    "study": propose_learning,
    "plan": propose_intent,
    "intend": propose_intent,
    "go": propose_goes_by,
}
