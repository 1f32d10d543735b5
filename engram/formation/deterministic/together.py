"""A decision the speaker took with someone named: "Ana and I have decided to move in together".

The speaker decided, so it is the speaker's decision, (I, committed_to, …), as "I decided to
…" is (:mod:`.plans`); the person it was taken with is part of what was decided: "move in with
Ana", "adopt a cat with Tom" ("together" says the same as "with Ana", and goes). Two shapes:

* "Ana and I decided to …", "my girlfriend Ana and I have decided to …": the clause splitter
  cuts before "I", so the partner is the clause before, joined by "and" (:func:`decided_with`);
* "Me and Ana have decided to …", "Ana and me decided to …": one clause
  (:func:`propose_decided_with`).

Only a name says who: "my wife and I decided to …" names nobody (and "we decided" is the
project's decision, :mod:`.decisions`). A negation, a hedge or a question decides nothing:
"haven't decided", "might", "are thinking about" match no pattern here, and the clause's mood
settles the rest.
"""

from __future__ import annotations

import re

from engram.formation.deterministic.dispatch import ClauseTriggers
from engram.formation.deterministic.findings import Finding
from engram.formation.deterministic.lexicon import RELATIVE_FACETS
from engram.formation.deterministic.phrases import ADVERBS, TIME_TAIL
from engram.formation.deterministic.terms import cut_phrase
from engram.formation.screening import screened

__all__ = ["TRIGGERS", "decided_with", "propose_decided_with"]

_NAME = r"[A-Z][a-z]+"
_KIN = "|".join(re.escape(w) for w in sorted(RELATIVE_FACETS, key=len, reverse=True))
_LEAD_IN = (
    r"(?:^|^.*?(?:,|\b(?:but|so|and|then|finally|eventually|now|end|today|yesterday|night"
    r"|week|weekend|month|year|all|anyway|long\s+story\s+short))\s+)"
)
""""It was a long winter, but in the end Ana": a decision told late in a longer sentence, after a
comma or a closed list of connectives and time words that end a lead-in; "I met Ana" ends with
a verb before the name, which is no lead-in, so "I met Ana and I decided …" names no partner."""
_PARTNER = re.compile(
    _LEAD_IN + r"(?:[Mm]y\s+(?:" + _KIN + r")\s+)?(?P<name>" + _NAME + r")$", re.DOTALL
)
""""Ana", "my girlfriend Ana", or either at the end of a lead-in: the clause before "and I"."""
_DECIDED = r"(?:have\s+|'ve\s+)?" + ADVERBS + r"decided\s+to\s+(?!not\b)(?P<what>[^,.;!?]+)"
_I_DECIDED = re.compile(r"^I\s+" + _DECIDED)
_ME_AND = screened(
    r"^(?:[Mm]e\s+and\s+(?P<name>"
    + _NAME
    + r")|(?P<other>"
    + _NAME
    + r")\s+and\s+me)\s+"
    + _DECIDED
)
_NOT_NAMES = frozenset(
    {
        "and", "but", "so", "then", "yes", "yeah", "well", "oh", "okay", "ok", "thanks", "hey",
        "hi", "hello", "sorry", "wow", "today", "yesterday", "tomorrow", "last", "this", "next",
        "my", "our", "the", "we", "you", "he", "she", "they", "it",
    }
)  # fmt: skip
_TOGETHER = re.compile(r"\s+together\b", re.IGNORECASE)


def decided_with(partner: str, clause: str) -> list[Finding]:
    """ "Ana" and "I have decided to move in together": (I, committed_to, move in with Ana)."""
    who = _PARTNER.match(partner.strip())
    decided = _I_DECIDED.match(clause)
    if who is None or decided is None:
        return []
    return _decision(decided.group("what"), who.group("name"))


def propose_decided_with(text: str) -> list[Finding]:
    """ "Me and Ana have decided to move in together", in one clause."""
    match = _ME_AND.match(text)
    if match is None:
        return []
    return _decision(match.group("what"), match.group("name") or match.group("other"))


def _decision(what: str, name: str) -> list[Finding]:
    if name.lower() in _NOT_NAMES:
        return []
    done = cut_phrase(TIME_TAIL.sub("", _TOGETHER.sub("", what))).strip()
    if not done or len(done.split()) > 6:
        return []
    return [Finding("I", "committed_to", f"{done} with {name}")]


TRIGGERS: ClauseTriggers = {propose_decided_with: (_ME_AND,)}
"""The one-clause shape needs "me and" or "and me" (:mod:`.dispatch` skips it otherwise)."""
