"""Task outcomes and authorship.

A finished task is a status of the task, not an event of the speaker: "the migration is done"
and "I finished the migration" both propose (the migration, has_status, done), so a later
"the migration is blocked again" replaces one current value. Completion words fold to
``done``; other statuses keep their own word. Making something ("I built the dashboard") is the
``created`` event, in the past tense, which admission accepts for events.
"""

from __future__ import annotations

import re

from engram.formation.deterministic.findings import Finding
from engram.formation.deterministic.lexicon import LASTING_STATUSES, STATUS_WORDS
from engram.formation.deterministic.predicate import Predicate
from engram.formation.deterministic.terms import cut_phrase, object_phrase

_STATUS = "|".join(re.escape(s) for s in sorted(STATUS_WORDS, key=len, reverse=True))
_SUBJECT = r"(?P<subject>(?:[Tt]he|[Oo]ur|[Mm]y|[Tt]his|[Tt]hat)\s+[\w'./-]+(?:\s+[\w'./-]+){0,4}?)"
_STATUS_CLAUSE = re.compile(
    "^" + _SUBJECT + r"\s+(?P<verb>is|are|'s|has been|have been|was|were|got|just got)"
    r"(?P<neg>\s+not|n't|\s+no longer)?(?:\s+(?:now|finally|already|officially|fully|still"
    r"|all|completely|totally|basically))*\s+(?P<status>" + _STATUS + r")\b"
    r"(?:\s+(?:by|on)\s+(?P<blocker>.+))?"
)
_DATE_CLAUSE = re.compile(
    "^" + _SUBJECT + r"\s+(?:is|are|'s)\s+(?P<kind>due|scheduled|planned|set)"
    r"(?:\s+(?:for|on|by))?\s+(?P<date>.+)$"
)
_FINISHING = {
    "finish": "done",
    "complete": "done",
    "wrap": "done",
    "ship": "shipped",
    "fix": "fixed",
    "deploy": "deployed",
    "merge": "merged",
    "release": "released",
    "launch": "launched",
}
_MAKING = frozenset({"build", "create", "write", "design"})


def propose_status(text: str) -> list[Finding]:
    """ "the migration is done", "the release is blocked by QA", "the demo is due Friday"."""
    match = _STATUS_CLAUSE.match(text)
    if match is not None:
        return _status(match)
    date = _DATE_CLAUSE.match(text)
    if date is None:
        return []
    relation = "due_on" if date.group("kind") == "due" else "scheduled_for"
    return [Finding(date.group("subject"), relation, object_phrase(date.group("date")))]


def _status(match: re.Match[str]) -> list[Finding]:
    subject = match.group("subject")
    status = STATUS_WORDS[match.group("status").lower()]
    neg = (match.group("neg") or "").strip()
    polarity = {"": None, "no longer": "retract"}.get(neg, "deny")
    past = match.group("verb") in {"was", "were"} and status not in LASTING_STATUSES
    findings = [
        Finding(
            subject, "has_status", status, polarity=polarity, tense="past" if past else "present"
        )
    ]
    if match.group("blocker") and status == "blocked":
        findings.append(
            Finding(
                subject,
                "blocked_by",
                object_phrase(match.group("blocker")),
                polarity=polarity,
                tense="past" if past else "present",
            )
        )
    return findings


def propose_outcome(predicate: Predicate) -> list[Finding]:
    """ "I finished the migration" is (the migration, has_status, done)."""
    lemma, rest = predicate.lemma or "", predicate.rest
    if predicate.form != "past" and not predicate.perfect:
        return []
    if lemma == "wrap":
        if not rest.lower().startswith("up "):
            return []
        rest = rest[3:]
    task = cut_phrase(re.sub(r"\s+(?:up|off)$", "", rest))
    if not task or task.lower() in {"it", "that", "this", "them", "up"}:
        return []
    return [Finding(task, "has_status", _FINISHING[lemma], tense="present")]


def propose_created(predicate: Predicate) -> list[Finding]:
    if predicate.form != "past" or predicate.rest.lower().startswith(("to ", "about ", "back")):
        return []
    made = object_phrase(predicate.rest)
    return [Finding(predicate.subject, "created", made)] if made else []


HANDLERS = {
    **{lemma: propose_outcome for lemma in _FINISHING},
    **{lemma: propose_created for lemma in _MAKING},
}
