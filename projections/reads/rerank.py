"""Recall's second stage: the first candidates of the messages' ranking read again with the
question, and put in order by a small linear model.

The first stage (:func:`engram.projections.reads.recall.rank_messages`) ranks up to a few
hundred candidates by their lists' scores alone. This stage reads only the first :data:`TOP` of
them again, with what the first stage could not weigh:

- **the answer's type**: a "when" question is answered by a message that says a time
  ("yesterday", "last week", "in May", "2022"), a "how many" or "how long" question by one that
  holds a number, a "where" question by one that names a place (:func:`asks_for`,
  :func:`says_time`, :func:`says_number`, :func:`names_place`);
- **what kind of message it is**: one that asks a question ("What did you do?") rarely holds
  the answer (:func:`is_question`);
- and the first stage's own order (``-ln(rank)``).

Each candidate's score is :data:`WEIGHTS` times its :func:`features`; the first :data:`TOP` are
sorted by it, ties kept in the first stage's order, and the rest follow in that order. The
weights were fitted on the dev split (docs/retrieval.md, "The second stage"), where the
message's lexical and semantic scores, its own words' share of the question and its length
were tried too and left out: they raised dev but not the held-out conversations. Pure: no I/O,
no clock; the same candidates always come out in the same order, and the cost is per question
(:data:`TOP` messages' words, whatever the memory's size).
"""

from __future__ import annotations

import math
import re
from collections.abc import Hashable, Mapping, Sequence
from enum import Enum
from typing import TypeVar

TOP = 20
"""How many of the first stage's candidates are read again."""


class Asks(Enum):
    """The kind of answer a question asks for, where its first words say it."""

    TIME = "time"
    NUMBER = "number"
    PLACE = "place"
    OTHER = "other"


_ASKS_TIME = re.compile(
    r"^\W*(?:when\b|what\s+(?:year|month|day|date|time)\b|which\s+(?:year|month|day)\b"
    r"|how\s+long\s+ago\b|since\s+when\b)",
    re.I,
)
_ASKS_NUMBER = re.compile(r"\bhow\s+(?:many|much|long|often|old)\b", re.I)
_ASKS_PLACE = re.compile(r"^\W*(?:where\b|what\s+(?:city|country|place|state)\b)", re.I)


def asks_for(question: str) -> Asks:
    """What ``question`` asks for: a time, a number, a place, or something else."""
    if _ASKS_TIME.search(question):
        return Asks.TIME
    if _ASKS_PLACE.search(question):
        return Asks.PLACE
    if _ASKS_NUMBER.search(question):
        return Asks.NUMBER
    return Asks.OTHER


_MONTH_NAMES = (
    "january|february|march|april|may|june|july|august|september|october|november|december"
    "|jan|feb|mar|apr|jun|jul|aug|sep|sept|oct|nov|dec"
)
_TIME = re.compile(
    r"\b(?:yesterday|today|tonight|tomorrow|recently|ago|lately"
    r"|(?:last|next|this|past|few|couple\s+of)\s+(?:\w+\s+)?"
    r"(?:night|morning|evening|weekend|week|weeks|month|months|year|years|days?|summer|winter"
    r"|spring|fall|autumn)"
    r"|(?:mon|tues|wednes|thurs|fri|satur|sun)day"
    r"|(?:19|20)\d\d"
    r"|(?:" + _MONTH_NAMES + r")\.?\s+\d{1,2}(?:st|nd|rd|th)?\b"
    r"|\d{1,2}(?:st|nd|rd|th)?\s+(?:of\s+)?(?:" + _MONTH_NAMES + r")\b"
    r"|(?:in|since|until|during)\s+(?:" + _MONTH_NAMES + r")\b)",
    re.I,
)
_NUMBER = re.compile(
    r"\b(?:\d+(?:[.,]\d+)?|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve"
    r"|twenty|thirty|forty|fifty|hundred|thousand|dozen|couple|few|several|once|twice)\b",
    re.I,
)
_PLACE = re.compile(r"\b(?:in|at|to|from|near|visited|visit|around)\s+(?:the\s+)?[A-Z][a-z]+")


def says_time(text: str) -> bool:
    """Whether ``text`` says when something happened (a day, a date, a relative time)."""
    return _TIME.search(text) is not None


def says_number(text: str) -> bool:
    """Whether ``text`` holds a number, in digits or in words."""
    return _NUMBER.search(text) is not None


def names_place(text: str) -> bool:
    """Whether ``text`` names a place: a capitalised word after "in", "at", "to", "from"…"""
    return _PLACE.search(text) is not None


_CLOSING = "\"') \u201d\u2019"
"""What may close a sentence after its mark: quotes, brackets, spaces."""


def is_question(text: str) -> bool:
    """Whether ``text`` ends as a question (its last sentence asks)."""
    return text.rstrip().rstrip(_CLOSING).endswith("?")


FEATURES = (
    "first_stage",
    "question",
    "time_for_when",
    "number_for_how_many",
    "place_for_where",
)
"""The features' names, in :func:`features`' order."""


def features(content: str, rank: int, asks: Asks) -> tuple[float, ...]:
    """A candidate's features (:data:`FEATURES`): the message's words ``content``, at ``rank``
    (from 1) in the first stage, for a question asking for ``asks``."""
    return (
        -math.log(rank),
        float(is_question(content)),
        float(asks is Asks.TIME and says_time(content)),
        float(asks is Asks.NUMBER and says_number(content)),
        float(asks is Asks.PLACE and names_place(content)),
    )


WEIGHTS = (1.68, -0.64, 2.33, 1.03, 2.11)
"""Each feature's weight (:data:`FEATURES`' order): a listwise logistic model (softmax over a
question's first :data:`TOP` candidates, L2 0.003) fitted on the dev split's 365 questions
(docs/retrieval.md, "The second stage"). A message that says a time for a "when" question is
worth about four places of the first stage (``2.33 / 1.68`` in ``ln(rank)``)."""

H = TypeVar("H", bound=Hashable)


def score(values: Sequence[float], weights: Sequence[float] = WEIGHTS) -> float:
    """The linear model's score of one candidate's features."""
    return math.fsum(w * v for w, v in zip(weights, values, strict=True))


def rerank(
    ranked: Sequence[H],
    contents: Mapping[H, str],
    asks: Asks,
    *,
    weights: Sequence[float] = WEIGHTS,
    top: int = TOP,
) -> list[H]:
    """``ranked`` (the first stage's order) with its first ``top`` put in order of their
    score (``contents``: each one's words), best first (ties in the first stage's order), and
    the rest after them as they were."""
    head = list(ranked[:top])
    scores = {
        item: score(features(contents[item], rank, asks), weights)
        for rank, item in enumerate(head, start=1)
    }
    order = {item: place for place, item in enumerate(head)}
    head.sort(key=lambda item: (-scores[item], order[item]))
    return [*head, *ranked[top:]]
