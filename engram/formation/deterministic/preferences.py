"""Preferences with topic facets: "I prefer concise answers", "I can't stand tabs"."""

from __future__ import annotations

import re

from engram.formation.deterministic.dispatch import ClauseTriggers
from engram.formation.deterministic.facets import STYLE_FACETS, facet_for, preference_facet
from engram.formation.deterministic.findings import WEAK_CONFIDENCE, Finding
from engram.formation.deterministic.habits import pastime
from engram.formation.deterministic.nouns import closed
from engram.formation.deterministic.predicate import Predicate
from engram.formation.deterministic.terms import object_list

_LIKES = frozenset({"prefer", "rather", "like", "love", "enjoy", "adore"})
_DISLIKES = frozenset({"hate", "dislike", "detest", "avoid", "stand"})
_WEAK = frozenset({"like", "enjoy"})
_PRONOUN_OBJECT = re.compile(
    r"(?:it|that|this|these|those|them|how|what|when|where|why|you|your|yours|him|her|his"
    r"|their|the idea|the way|when you|to be|being)\b",
    re.IGNORECASE,
)
_COMPARING = frozenset({"prefer", "rather"})
"""Only "prefer" compares ("I prefer tea to coffee"); "I love escaping to the hills" does not."""
_COMPARISON = re.compile(r"\s+(?:to|over|than|rather than|instead of|vs\.?|versus)\s+.*$", re.I)


_SPECIFIC = re.compile(r"^(?:the|my|our|his|her|their|its)\s+", re.IGNORECASE)
""""I love the energy of this city", "I love my new job": a specific thing in view, not a taste."""
_POSSESSIVE = re.compile(r"\b(?:my|our|your|his|her|their)\b", re.IGNORECASE)
""""seeing my teammates succeed", "focus on my body": a moment of someone's life, not a taste."""
_PREPOSITION_ITEM = re.compile(r"\s(?:about|of|with|on|for|from|in|like)\s", re.IGNORECASE)


_INFINITIVE = re.compile(
    r"^to\s+(?:(?:just|really|also|always)\s+)?(?P<verb>[a-z]+)\b(?P<tail>[^,;:!?\u2013\u2014-]*)",
    re.IGNORECASE,
)
_RECEIVING = closed("use have get receive work be")
"""The verbs after "prefer to" that name a thing received or used ("prefer to use tabs")."""
_FREQUENCY_TAIL = re.compile(
    r"\s+(?:on|at|in|every|each|most|whenever|when|with|for|after|before|during)\b.*$",
    re.IGNORECASE,
)


def _infinitive(rest: str) -> list[str] | None:
    """ "love to bake bread on Sundays" → ["baking bread"]: the same taste as "love baking
    bread"; ``[]`` for a verb that names no pastime ("prefer to wait"), ``None`` when ``rest`` is
    not an infinitive or names a thing received ("prefer to use tabs", read as before)."""
    match = _INFINITIVE.match(rest)
    if match is None or match.group("verb").lower() in _RECEIVING:
        return None
    gerund = pastime(match.group("verb"))
    if gerund is None:
        return []
    tail = _FREQUENCY_TAIL.sub("", match.group("tail")).strip()
    return [f"{gerund} {tail}".strip()] if len(tail.split()) <= 3 else [gerund]


def _objects(rest: str, lemma: str = "prefer") -> list[str]:
    pastime = _infinitive(rest) if lemma in _LIKES else None
    if pastime is not None:
        return pastime
    if lemma not in _COMPARING and (_SPECIFIC.match(rest) or rest.lower().startswith("to ")):
        return []  # "I like to collect jerseys" is a verb phrase, not a thing preferred
    rest = re.sub(
        r"^(?:to|using|working with|having|have|get|use|be given|receive)\s+",
        "",
        rest,
        flags=re.IGNORECASE,
    )
    rest = re.sub(r"^all\s+(?=[a-z]+s\b)", "", rest)  # "all dances" are dances
    if not rest or _PRONOUN_OBJECT.match(rest):
        return []
    head, _, _ = rest.partition(" ")
    if lemma in _COMPARING:
        rest = head + _COMPARISON.sub("", rest[len(head) :])
    items = [item for item in object_list(rest) if not _POSSESSIVE.search(item)]
    if len(items) > 1 and _PREPOSITION_ITEM.search(f" {items[0]} "):
        return items[:1]  # "books about design and mindset": the "and" is inside the phrase
    return items


def preference(subject: str, relation: str, obj: str, confidence: float) -> Finding:
    return Finding(subject, relation, obj, facet=preference_facet(obj), confidence=confidence)


def propose_preference(predicate: Predicate) -> list[Finding]:
    """prefers or dislikes, one per coordinated object; "don't like" is a dislike."""
    lemma, rest = predicate.lemma or "", predicate.rest
    relation = "prefers" if lemma in _LIKES else "dislikes"
    if rest.lower().startswith("not "):
        relation, rest = "dislikes", rest[4:]
    polarity: str | None = None
    if _retracting(predicate):
        pass
    elif predicate.negated and lemma in _LIKES:
        relation, polarity = "dislikes", "assert"
    elif predicate.negated and lemma == "stand":
        polarity = "assert"
    if lemma == "stand" and not predicate.negated:
        return []
    confidence = WEAK_CONFIDENCE if lemma in _WEAK else 0.5
    return [
        Finding(
            predicate.subject,
            relation,
            obj,
            facet=preference_facet(obj),
            confidence=confidence,
            polarity=polarity,
        )
        for obj in _objects(rest, lemma)
    ]


def _retracting(predicate: Predicate) -> bool:
    rest = predicate.rest.lower()
    return "no longer" in predicate.modifiers or "anymore" in rest or "any more" in rest


def propose_use(predicate: Predicate) -> list[Finding]:
    """uses a tool, or prefers a style ("I use tabs" is an indentation preference)."""
    if predicate.rest.lower().startswith("to "):
        return []
    rest = re.sub(r"\s+(?:for|with|on|at|in|to|when|as)\s+.*$", "", predicate.rest, flags=re.I)
    findings: list[Finding] = []
    for obj in object_list(rest):
        if facet_for(obj) in STYLE_FACETS:
            findings.append(preference(predicate.subject, "prefers", obj, 0.5))
        else:
            findings.append(Finding(predicate.subject, "uses", obj, confidence=WEAK_CONFIDENCE))
    return findings


def propose_switch(predicate: Predicate) -> list[Finding]:
    """ "switched from Vim to Neovim": uses Neovim now, no longer Vim."""
    match = re.match(r"(?:from\s+(?P<old>.+?)\s+)?to\s+(?P<new>.+)$", predicate.rest, re.I)
    if match is None or (predicate.form not in {"past"} and not predicate.perfect):
        return []
    current = propose_use(_with_rest(predicate, match.group("new")))
    current = [
        Finding(f.subject, f.relation, f.object, f.facet, f.confidence, None, "present")
        for f in current
    ]
    if match.group("old"):
        for old in propose_use(_with_rest(predicate, match.group("old"))):
            current.append(
                Finding(
                    old.subject,
                    old.relation,
                    old.object,
                    old.facet,
                    old.confidence,
                    "retract",
                    "present",
                )
            )
    return current


def _with_rest(predicate: Predicate, rest: str) -> Predicate:
    return Predicate(predicate.subject, predicate.modifiers, predicate.lemma, predicate.form, rest)


_REQUEST = re.compile(
    r"^(?:please\s+)?(?:always\s+)(?:use|give me|answer in|answer with|reply in|reply with"
    r"|respond in|respond with|write in|format (?:answers|replies) (?:as|in)|stick to)\s+(.+)$",
    re.IGNORECASE,
)


def propose_request(text: str) -> list[Finding]:
    """ "please always use metric units": a standing request is a preference of the speaker."""
    match = _REQUEST.match(text)
    if match is None:
        return []
    return [preference("I", "prefers", obj, 0.5) for obj in _objects(match.group(1))]


TRIGGERS: ClauseTriggers = {propose_request: (_REQUEST,)}
"""A standing request opens with its verb: :func:`propose_request` finds nothing where
``_REQUEST`` does not match (:mod:`.dispatch` skips it)."""

HANDLERS = {
    **{lemma: propose_preference for lemma in (*_LIKES, *_DISLIKES)},
    "use": propose_use,
    "switch": propose_switch,
    "migrate": propose_switch,
}
