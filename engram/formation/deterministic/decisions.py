"""Project decisions and rules, told as "we": "we decided to deploy on Fridays".

A decision or a plan whose words are not the project's work ("we decided to adopt a dog", "we
plan to visit Rome") is the household's, and the speaker's as one of them: (I, committed_to,
adopt a dog).

A decision is (we, committed_to, what was decided), with the decision written as the message
wrote it. "decided not to X" and "we never X" are (we, prohibits, X); "we always X" is
(we, requires, X). Suggestions and deliberation ("we should", "we might", "let's think
about") are hedges: proposed so that the refusal keeps their words, never admitted.
"""

from __future__ import annotations

import re
from datetime import date

from engram.formation.deterministic.dates import before_ahead, ground_ahead
from engram.formation.deterministic.findings import REFUSED_CONFIDENCE, WEAK_CONFIDENCE, Finding
from engram.formation.deterministic.phrases import TIME_TAIL
from engram.formation.deterministic.terms import object_phrase

_TAIL = re.compile(
    r"(?:\s+(?:because|since|but|so that|so|although|though|from now on|going forward"
    r"|for now|as of (?:today|now))\b|\s*[,;:(!?]).*$",
    re.IGNORECASE | re.DOTALL,
)
_SUBJECT = r"(?P<subject>[Ww]e|[Tt]he team|[Oo]ur team)(?:'ve|'ll|'re|'d)?"
_WORK_VERBS = (
    r"(?=(?:squash|rebase|lint|commit|tag|format|back up|encrypt|sign|log|use|deploy|ship|release|migrate|move|switch|adopt|run|build|launch|freeze|drop"
    r"|replace|upgrade|downgrade|add|remove|store|host|publish|merge|rename|split|stop|start"
    r"|require|enforce|standardi[sz]e|support|deprecate|archive|rewrite|refactor|document"
    r"|test|review|keep using|go with|stick with|pin|block|allow|cut|rotate|roll out"
    r"|rollback|roll back|retire|sunset|benchmark|track)\b)"
)
"""A "we will …" is a project commitment only when it commits the project's work: "we'll keep
going" and "we'll let you know" are pleasantries, not decisions. The same holds for "we always
…" and "we never …": "we always look forward to the holidays" is a household's habit, not a
rule of the project."""
_SHAPES: tuple[tuple[str, str, bool], ...] = (
    # (pattern after the subject, relation, whether the object is a verb phrase)
    (
        r"(?:have\s+)?(?:decided|agreed|resolved|committed)\s+not\s+to\s+(?P<obj>.+)$",
        "prohibits",
        True,
    ),
    (
        r"(?:have\s+)?(?:decided|agreed|resolved|committed)\s+(?:to|that we(?:'ll| will)?)\s+"
        r"(?P<obj>.+)$",
        "committed_to",
        True,
    ),
    (
        r"(?:have\s+|are\s+)?(?:decided on|settled on|chose|picked|opted for|went with"
        r"|going with|gone with|agreed on|standardi[sz]ed on)\s+(?P<obj>.+)$",
        "committed_to",
        False,
    ),
    (
        r"(?:will|are going to|are gonna|gonna|shall)\s+" + _WORK_VERBS + r"(?P<obj>.+)$",
        "committed_to",
        True,
    ),
    (r"(?:must always\s+|always\s+" + _WORK_VERBS + r")(?P<obj>.+)$", "requires", True),
    (r"(?:must|have to)\s+(?!not\b)(?P<obj>.+)$", "requires", True),
    (
        r"(?:(?:must never|must not|mustn't|should never)\s+|never\s+" + _WORK_VERBS + r")"
        r"(?P<obj>.+)$",
        "prohibits",
        True,
    ),
    (r"(?:plan|are planning|intend)\s+to\s+(?P<obj>.+)$", "intends_to", True),
)
_COMPILED = tuple(
    (re.compile(_SUBJECT + r"\s+" + shape, re.IGNORECASE), relation, verb_phrase)
    for shape, relation, verb_phrase in _SHAPES
)
_EXPANDED = {"'ll": "will", "'re": "are", "'ve": "have"}
_OPENS_WITH_SUBJECT = re.compile(_SUBJECT, re.IGNORECASE)
"""What every pattern below starts with: a clause that does not open with it matches none."""
_HEDGES = re.compile(
    _SUBJECT + r"\s+(?:might|may|could|should|are thinking (?:about|of)|are considering"
    r"|want to|would like to)\s+(?P<obj>.+)$",
    re.IGNORECASE,
)


_IS_WORK = re.compile(_WORK_VERBS, re.IGNORECASE)
_HOUSEHOLD_RELATIONS = frozenset({"committed_to", "intends_to"})


def _household(relation: str, obj: str, text: str, occurred_on: date | None) -> list[Finding]:
    """ "We decided to adopt a dog", "we plan to visit Rome in the spring": a decision or a
    plan of the people the speaker lives or travels with, not the project's work (no work verb:
    :data:`_WORK_VERBS`). The speaker is one of "we", so it is the speaker's: (I, committed_to,
    adopt a dog), a plan with its date when the words give one ahead."""
    done = TIME_TAIL.sub("", before_ahead(obj)).strip()
    if not done:
        return []
    if relation == "intends_to":
        when = ground_ahead(text, occurred_on)
        done = f"{done} ({when})" if when else done
        return [Finding("I", relation, done, confidence=WEAK_CONFIDENCE)]
    return [Finding("I", relation, done)]


def _expand(text: str) -> str:
    """ "we'll use" → "we will use", keeping the subject; only for matching."""
    match = re.match(r"([Ww]e|[Tt]he team|[Oo]ur team)('ll|'re|'ve)", text)
    if match is None:
        return text
    return match.group(1) + " " + _EXPANDED[match.group(2)] + text[match.end() :]


def _decided(text: str, verb_phrase: bool) -> str:
    obj = _TAIL.sub("", text).strip().rstrip(".!")
    return obj if verb_phrase else object_phrase(obj)


def propose_decision(text: str, occurred_on: date | None = None) -> list[Finding]:
    """The decision or rule a "we" clause states, if it states one."""
    expanded = _expand(text)
    if _OPENS_WITH_SUBJECT.match(expanded) is None:
        return []  # every shape and the hedges open with the subject
    for pattern, relation, verb_phrase in _COMPILED:
        match = pattern.match(expanded)
        if match is not None:
            obj = _decided(match.group("obj"), verb_phrase)
            household = verb_phrase and relation in _HOUSEHOLD_RELATIONS
            if obj and household and _IS_WORK.match(obj) is None:
                return _household(relation, obj, text, occurred_on)
            return [Finding(match.group("subject"), relation, obj)] if obj else []
    hedge = _HEDGES.match(expanded)
    if hedge is not None:
        obj = _decided(hedge.group("obj"), True)
        return (
            [
                Finding(
                    hedge.group("subject"),
                    "committed_to",
                    obj,
                    polarity="hedge",
                    confidence=REFUSED_CONFIDENCE,
                )
            ]
            if obj
            else []
        )
    return []
