"""The mood of a clause: whether it asserts, hedges, denies, retracts, wishes or reports.

Questions, reported speech and wishes form nothing. Hedges, denials, hypotheticals and past
states are proposed with the polarity or tense that makes admission refuse them with words.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from engram.formation.screening import NeedleIndex, lowered, screened

_REPORTED = screened(
    r"\b(?:said|says|told me|tells me|telling me|mentioned|claims?|claimed|thinks|believes"
    r"|heard|according to|asked me|wrote that|texted me|reckons|insists|told us|tells us)\b",
    re.IGNORECASE,
)
CONDITIONAL_LEADS = (
    "if", "unless", "suppose", "supposing", "imagine", "assuming", "when", "whenever", "once",
    "in case", "what if", "let's say", "say",
)  # fmt: skip
"""Words that open a conditional clause: the one list both mood and reading use."""
HEDGE_LEADS = (
    "I think", "I guess", "I believe", "I suppose", "I reckon", "I feel like", "maybe",
    "perhaps", "probably", "possibly",
)  # fmt: skip
"""Hedges that can open a clause ("I think I live in Oslo"): reading strips them to find the
claim, and the clause stays hedged."""
HEDGE_WORDS = (
    *HEDGE_LEADS, "might", "not sure", "unsure", "kind of", "sort of", "apparently",
    "presumably", "likely", "considering", "thinking about", "thinking of", "should",
)  # fmt: skip
"""Every hedge word, anywhere in a clause."""


def _alternatives(words: tuple[str, ...]) -> str:
    return "|".join(re.escape(w) for w in sorted(words, key=len, reverse=True))


_CONDITIONAL = re.compile(
    r"(?:" + _alternatives((*CONDITIONAL_LEADS, "hypothetically")) + r")\b", re.IGNORECASE
)
CONDITIONAL_PREFIX = screened(
    r"^(?:" + _alternatives(CONDITIONAL_LEADS) + r")\s+(?:that\s+)?", re.IGNORECASE
)
HEDGE_PREFIX = screened(
    r"^(?:(?:" + _alternatives(HEDGE_LEADS) + r")(?:\s+that)?,?\s+)+", re.IGNORECASE
)
_WISH = screened(
    r"\b(?:I wish|I(?:'d| would) (?:like|love|want) to|I want to|I hope to|I'm hoping to"
    r"|someday|some day|one day|dream of|dreaming of|I'd|I would|we'd|we would|could)\b",
    re.IGNORECASE,
)
_NOT_A_WISH = re.compile(r"\b(?:I'd|I would|we'd|we would) (?:rather|prefer)\b", re.IGNORECASE)
_HEDGE = screened(r"\b(?:" + _alternatives(HEDGE_WORDS) + r")\b", re.IGNORECASE)
_MODAL_MAY = screened(r"\bmay\b")
_NO_LONGER = screened(r"\b(?:no longer|anymore|any more|not any longer)\b", re.IGNORECASE)


_MOOD_WORDS = NeedleIndex.of([_REPORTED, _WISH, _HEDGE, _NO_LONGER, _MODAL_MAY])
_REPORTED_BIT, _WISH_BIT, _HEDGE_BIT, _NO_LONGER_BIT, _MAY_BIT = 1, 2, 4, 8, 16


@dataclass(frozen=True, slots=True)
class Mood:
    silent: bool
    """A question, reported speech or a wish: the clause forms nothing."""
    conditional: bool
    hedged: bool
    no_longer: bool


def clause_mood(text: str, *, question: bool) -> Mood:
    """The mood of one clause, from its words (apostrophes already normalised).

    The four screened word lists are looked for in one pass (:data:`_MOOD_WORDS`); a list none
    of whose needles is in the clause cannot match it and is not searched."""
    possible = _MOOD_WORDS.possible(text)
    low = lowered(text) if possible else None
    wish = bool(possible & _WISH_BIT and _WISH.search_lowered(text, low)) and not (
        _NOT_A_WISH.search(text)
    )
    reported = bool(possible & _REPORTED_BIT and _REPORTED.search_lowered(text, low))
    hedge = bool(possible & _HEDGE_BIT and _HEDGE.search_lowered(text, low))
    return Mood(
        silent=question or reported or wish,
        conditional=bool(_CONDITIONAL.match(text)),
        hedged=hedge or bool(possible & _MAY_BIT and _MODAL_MAY.search(text)),
        no_longer=bool(possible & _NO_LONGER_BIT and _NO_LONGER.search_lowered(text, low)),
    )


def polarity(mood: Mood, *, negated: bool) -> str:
    """Hedge before retraction before denial: an unsure retraction is still unsure."""
    if mood.hedged:
        return "hedge"
    if mood.no_longer:
        return "retract"
    return "deny" if negated else "assert"
