"""Groups the speaker joined or belongs to, told anywhere in a clause.

"Last night I joined a local chess forum" and "the online support group I'm a part of" state a
membership, but neither opens with "I joined …" where the verb reader looks. These patterns
search the whole clause, anchored on "I" and a closed list of group nouns (forums and online
communities included, which a membership verb alone does not name); an event joined ("joined a
tournament") is an event (:mod:`.events`), and "my friend group" or "a group of people" names
no group.
"""

from __future__ import annotations

import re
from datetime import date

from engram.formation.deterministic.dispatch import Reader, Triggers
from engram.formation.deterministic.ends import words
from engram.formation.deterministic.findings import Finding
from engram.formation.deterministic.nouns import closed
from engram.formation.deterministic.phrases import ADVERBS

_HEADS = (
    r"forum|club|group|team|choir|band|league|troupe|society|guild|community|collective|brigade"
    r"|association|orchestra|ensemble|squad|chapter|network|crew"
)
_KIND = r"(?P<kind>(?:[\w'-]+\s+){0,3}?)"
_JOINED = re.compile(
    r"\bI(?:'ve| have)?\s+" + ADVERBS + r"(?:joined|signed up (?:for|with)|became a member of)\s+"
    r"(?:a|an|the|this)\s+" + _KIND + r"(?P<head>" + _HEADS + r")\b(?!\s+(?:of|from|chat)\b)"
)
_PART_OF = re.compile(
    r"\b(?:a|an|the)\s+" + _KIND + r"(?P<head>" + _HEADS + r")\s+(?:that\s+)?I(?:'m| am)\s+"
    r"(?:(?:now|also|still)\s+)?(?:a\s+)?(?:part|member)\s+of\b"
    r"|\bI(?:'m| am)\s+(?:(?:now|also|still)\s+)?(?:a\s+)?(?:part|member)\s+of\s+(?:a|an|the)\s+"
    + _KIND.replace("kind", "kind2")
    + r"(?P<head2>"
    + _HEADS
    + r")\b(?!\s+(?:of|from|chat)\b)"
)
_NOT_KINDS = closed(
    """
    friend friends family work school kids kid other whole same big small new usual regular
    normal inner close social this that my your his her their our support-group
    """
)


def _named(kind: str, head: str) -> Finding | None:
    found = words(kind)
    if not found or set(found) & _NOT_KINDS or not all(w.replace("-", "").isalpha() for w in found):
        return None  # "joined a group" names nothing; "my friend group" is no membership
    return Finding("I", "member_of", f"{' '.join(found)} {head}", tense="present")


def _joined(text: str, occurred_on: date | None) -> list[Finding]:
    match = _JOINED.search(text)
    found = _named(match.group("kind"), match.group("head")) if match else None
    return [found] if found else []


def _part_of(text: str, occurred_on: date | None) -> list[Finding]:
    match = _PART_OF.search(text)
    if match is None:
        return []
    kind = match.group("kind") if match.group("head") else match.group("kind2")
    found = _named(kind or "", match.group("head") or match.group("head2"))
    return [found] if found else []


PROPOSERS: tuple[Reader, ...] = (_joined, _part_of)

TRIGGERS: Triggers = {
    _joined: (_JOINED,),
    _part_of: (_PART_OF,),
}
"""For each reader, the patterns one of which must match a clause for it to find anything
(:mod:`.dispatch` skips it otherwise)."""
