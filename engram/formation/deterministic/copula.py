"""What "I'm …" says about the speaker: a role, a home, a time zone, a name, a membership."""

from __future__ import annotations

import re
from collections.abc import Callable

from engram.formation.deterministic.attributes import languages, organisation, place, role_phrase
from engram.formation.deterministic.findings import WEAK_CONFIDENCE, Finding
from engram.formation.deterministic.predicate import Predicate
from engram.formation.deterministic.preferences import preference
from engram.formation.deterministic.terms import leading_name, object_list, object_phrase

TIMEZONE = (
    r"(?:(?:UTC|GMT)\s?[+\-\u2212]\s?\d{1,2}(?::?\d{2})?|UTC|GMT|CET|CEST|EET|EEST|WET|WEST|BST"
    r"|IST|JST|KST|AEST|AEDT|ACST|AWST|NZST|NZDT|[PMCE][SD]T|[PMCE]T|HST|AKST|SGT|HKT|BRT"
    r"|ART|MSK|[A-Z][a-z]+/[A-Z][A-Za-z_]+|(?:Pacific|Eastern|Central|Mountain|Atlantic"
    r"|Greenwich|Central European|Eastern European|India|Japan|Singapore|Berlin|London"
    r"|Sydney|Lisbon|Paris|Tokyo) (?:time|Time))"
)
_TIMEZONE = re.compile(r"(?:in|on|using)\s+(?:the\s+)?(?P<tz>" + TIMEZONE + r")(?:\s+time)?\b")

Complement = Callable[[str, re.Match[str]], list[Finding]]


def _name(subject: str, match: re.Match[str]) -> list[Finding]:
    name = leading_name(match.group(1))
    return [Finding(subject, "has_name", name)] if name else []


def _home(subject: str, match: re.Match[str]) -> list[Finding]:
    return [Finding(subject, "lives_in", place(match.group(1)))]


def _timezone(subject: str, match: re.Match[str]) -> list[Finding]:
    return [Finding(subject, "has_timezone", match.group("tz"))]


def _fan(subject: str, match: re.Match[str]) -> list[Finding]:
    return [preference(subject, "prefers", obj, 0.5) for obj in object_list(match.group(1))]


def _native(subject: str, match: re.Match[str]) -> list[Finding]:
    return [Finding(subject, "speaks", lang) for lang in languages(match.group(1))]


def _member(subject: str, match: re.Match[str]) -> list[Finding]:
    return [Finding(subject, "member_of", organisation(match.group(1)))]


def _interested(subject: str, match: re.Match[str]) -> list[Finding]:
    items = object_list(match.group(1))
    return [Finding(subject, "interested_in", item, confidence=WEAK_CONFIDENCE) for item in items]


def _expert(subject: str, match: re.Match[str]) -> list[Finding]:
    return [Finding(subject, "knows_about", item) for item in object_list(match.group(1))]


def _employed(subject: str, match: re.Match[str]) -> list[Finding]:
    return [Finding(subject, "works_at", organisation(match.group(1)))]


def _responsible(subject: str, match: re.Match[str]) -> list[Finding]:
    return [Finding(subject, "responsible_for", object_phrase(match.group(1)))]


def _blocked(subject: str, match: re.Match[str]) -> list[Finding]:
    return [Finding(subject, "blocked_by", object_phrase(match.group(1)))]


def _married(subject: str, match: re.Match[str]) -> list[Finding]:
    name = leading_name(match.group(1))
    return [Finding(subject, "related_to", name, facet="spouse")] if name else []


def _role(subject: str, match: re.Match[str]) -> list[Finding]:
    role = role_phrase(match.group(0))
    if role is None:
        return []
    findings = [Finding(subject, "has_role", role[0])]
    return findings + ([Finding(subject, "works_at", role[1])] if role[1] else [])


_COMPLEMENTS: tuple[tuple[re.Pattern[str], Complement], ...] = tuple(
    (re.compile(pattern, re.IGNORECASE), handler)
    for pattern, handler in (
        (r"(?:called|named)\s+(.+)$", _name),
        (r"(?:based|located|settled|living)\s+in\s+(.+)$", _home),
        (r"(?:a |an )?(?:big |huge |massive |)fan of\s+(.+)$", _fan),
        (r"(?:a |an )?native\s+(.+?)\s+speaker\b", _native),
        (r"fluent in\s+(.+)$", _native),
        (r"(?:a member of|part of|in|on)\s+(the\s+.+?\s+(?:team|group|squad|guild)\b.*)$", _member),
        (r"(?:a member of|part of)\s+(.+)$", _member),
        (
            r"(?:really |very |also )?(?:interested in|into|passionate about|keen on)\s+(.+)$",
            _interested,
        ),
        (r"(?:an expert|experienced|proficient|an expert)\s+(?:in|at|with|on)\s+(.+)$", _expert),
        (r"employed\s+(?:at|by)\s+(.+)$", _employed),
        (r"(?:responsible for|in charge of)\s+(.+)$", _responsible),
        (r"(?:blocked|stuck)\s+(?:by|on)\s+(.+)$", _blocked),
        (r"married to\s+(.+)$", _married),
        (r"(?:a|an)\s+.+$", _role),
    )
)


def propose_copula(predicate: Predicate) -> list[Finding]:
    """The first complement shape that fits what follows "I'm"."""
    if not predicate.copula or predicate.lemma is not None:
        return []
    rest = predicate.rest
    zone = _TIMEZONE.match(rest)
    if zone is not None:
        return _timezone(predicate.subject, zone)
    for pattern, handler in _COMPLEMENTS:
        match = pattern.match(rest)
        if match is not None:
            return handler(predicate.subject, match)
    return []
