"""Splitting an utterance into clauses: the unit a deterministic candidate quotes.

A clause keeps its character offset into the message, so every quote the extractor proposes is
an exact substring of the content. Sentences split at terminal punctuation; within a sentence a
conjunction or comma starts a new clause only when a new subject follows ("… and we decided
…"), so a coordinated object list ("a watch and a car") stays in one clause.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from engram.formation.deterministic.lexicon import RELATIVE_WORDS
from engram.formation.screening import longest_match

_SENTENCE_END = re.compile(r"[.!?;][.!?;]*(?=[\s\"'\u201d\u2019)]|$)|\n\n*")
"""``[.!?;]+`` written as one character and a repeat: a pattern whose every branch opens with a
character (not a repeat) tells ``re`` which characters a match can start with, and it then skips
to them in C instead of trying every position of the message."""
_ABBREVIATION = re.compile(
    r"\b(?:St|Dr|Mr|Mrs|Ms|Jr|Sr|Inc|Ltd|Co|Corp|vs|etc|e\.g|i\.e|approx|Prof|Mt)$"
)
_ABBREVIATION_WIDTH = longest_match(_ABBREVIATION)
_ABBREVIATION_REACH = _ABBREVIATION_WIDTH + 1
"""How far before a full stop an abbreviation can start: its longest match, and one more for
a ``$`` that matches before a final newline. The search starts there instead of at the start of
the message (``\\b`` still sees the character before: a search's start is not the string's)."""
_STARTER = (
    r"(?=(?:I\b|I['\u2019]|[Ww]e\b|[Ww]e['\u2019]|[Tt]he team\b|[Oo]ur team\b|[Cc]all me\b"
    r"|(?:[Mm]y|[Oo]ur|[Tt]he)\s+[\w-]+(?:\s+[\w-]+)?\s+(?:is|are|was|has|isn['\u2019]t)\b"
    r"|[Mm]y\s+(?:" + "|".join(sorted(RELATIVE_WORDS, key=len, reverse=True)) + r")\b))"
)
_CONNECTIVE = r"(?:and|but|so|or|plus|while|whereas|because|since|though|although|also)"
_COMMA = r"[,:]\s*(?:" + _CONNECTIVE + r"\s+)?"
_BOUNDARY = re.compile(
    r"(?:"
    + _COMMA
    + r"|\s\s*(?:"
    + _COMMA
    + r"|"
    + _CONNECTIVE
    + r"\s+|[-\u2013\u2014]+\s+))"
    + _STARTER
)
"""A comma or colon (a connective may follow), a connective, or a dash set off by spaces, then
a new subject. Every branch opens with one character (``\\s\\s*``, not ``\\s*``/``\\s+``)
so ``re`` skips to where a match can start (see ``_SENTENCE_END``); the spaces before a comma
are the same run either way, so the matches are those of ``\\s*[,:]…|\\s+conn\\s+|\\s+-+\\s+``."""
_DISCOURSE = re.compile(
    r"(?:(?:oh|ah|well|so|and|but|also|anyway|anyways|btw|by the way|fyi|actually|honestly"
    r"|ok|okay|yes|yeah|yep|no|nope|hi|hey|hello|ps|p\.s\.|just so you know|for context"
    r"|for the record|fun fact|note|update|quick update|heads up|oh and|and also|sorry"
    r"|these days|nowadays|currently|at the moment|right now|lately|recently|today)"
    r"(?:[,:!.]+\s*|\s+))+",
    re.IGNORECASE,
)
_QUESTION_START = re.compile(
    r"^(?:what|where|when|why|how|which|who)\b"
    r"|^(?:do|does|did|should|would|could|can|is|are|am|was|were|will|shall|have|has)"
    r"(?:n't|\s+not)?\s+(?:you|u|ya|it|he|she|they|we|i|there|the|this|that|these|those|your|my"
    r"|our|his|her|their|its|anyone|anybody|someone|somebody|everyone|everybody|a|an|any|some)\b",
    re.IGNORECASE,
)
"""A clause that asks without its "?": a question word, or an auxiliary and then the subject
asked about ("do you …", "is it …"). An auxiliary followed by anything else opens a statement
whose "I" was dropped ("Was super nervous last week", "Did an analysis of the series")."""
_LEADING_JUNK = " \t\"'\u201c\u201d\u2018\u2019([{*-\u2022>"
_TRAILING_JUNK = " \t\"'\u201c\u201d\u2018\u2019)]}.,;:!?*"


@dataclass(frozen=True, slots=True)
class Clause:
    """One clause: its original text, its character offset, and whether it asks something."""

    text: str
    start: int
    question: bool


def split_clauses(content: str) -> list[Clause]:
    """The clauses of ``content``, in order; empty pieces are dropped."""
    clauses: list[Clause] = []
    for start, end, question in _sentences(content):
        cut = start
        for match in _BOUNDARY.finditer(content, start, end):
            clauses.extend(_trimmed(content, cut, match.start(), question))
            cut = match.end()
        clauses.extend(_trimmed(content, cut, end, question))
    return clauses


def _sentences(content: str) -> list[tuple[int, int, bool]]:
    pieces: list[tuple[int, int, bool]] = []
    start = 0
    for match in _SENTENCE_END.finditer(content):
        end = match.start()
        reach = max(0, end - _ABBREVIATION_REACH)
        if match.group() == "." and _ABBREVIATION.search(content, reach, end):
            continue
        pieces.append((start, match.start(), "?" in match.group()))
        start = match.end()
    if start < len(content):
        pieces.append((start, len(content), False))
    return pieces


def _trimmed(content: str, start: int, end: int, question: bool) -> list[Clause]:
    while start < end and content[start] in _LEADING_JUNK:
        start += 1
    while end > start and content[end - 1] in _TRAILING_JUNK:
        end -= 1
    discourse = _DISCOURSE.match(content, start, end)
    if discourse is not None and discourse.end() < end:
        start = discourse.end()
    if start >= end:
        return []
    text = content[start:end]
    return [Clause(text=text, start=start, question=question or bool(_QUESTION_START.match(text)))]
