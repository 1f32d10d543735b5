"""Skills the speaker is learning, told as "learning to play" or as lessons taken.

"I'm learning how to play the cello" and "I've been taking salsa lessons" say what the speaker
is learning (``learning``), but "learn" followed by "to"/"how" is left alone by the verb reader,
which cannot tell "learning to play the cello" from "learning to let go". Here only a game or
instrument after "to play", or a lesson subject of one or two words, is kept.
"""

from __future__ import annotations

import re
from datetime import date

from engram.formation.deterministic.dispatch import Reader, Triggers
from engram.formation.deterministic.ends import words
from engram.formation.deterministic.findings import Finding
from engram.formation.deterministic.nouns import SPORTS, closed
from engram.formation.deterministic.phrases import ADVERBS

_INSTRUMENTS = (
    r"piano|guitar|violin|cello|drums|clarinet|flute|saxophone|sax|trumpet|ukulele|bass|harp"
    r"|banjo|trombone|oboe|viola|harmonica|accordion|keyboards?|mandolin"
)
_TO_PLAY = re.compile(
    r"\bI(?:'m| am|'ve been| have been)\s+" + ADVERBS + r"(?:now\s+)?learning\s+(?:how\s+)?to\s+"
    r"play\s+(?:the\s+)?(?P<what>" + _INSTRUMENTS + r"|[a-z]+)\b"
)
_LEARNING_INSTRUMENT = re.compile(
    r"\b(?:I'm|I am|I've been|just|now|been)\s+(?:(?:just|now|also|still|slowly)\s+)?learning\s+"
    r"(?:the\s+)?(?P<what>" + _INSTRUMENTS + r")\b"
)
""""…, just learning the piano": an instrument learned, told without "to play"."""
_LESSONS = re.compile(
    r"\bI(?:'m| am|'ve been| have been)\s+" + ADVERBS + r"(?:now\s+)?taking\s+(?:some\s+)?"
    r"(?P<what>[A-Za-z]+(?:\s+[a-z]+)?)\s+(?:lessons|classes)\b"
)
_INSTRUMENT_WORDS = frozenset(_INSTRUMENTS.replace("?", "").split("|")) | {"keyboards"}
_NOT_SUBJECTS = closed(
    """
    some a the my his her their our online more extra few these those night evening morning
    weekend summer winter college university community private group free two three new
    """
)


def _to_play(text: str, occurred_on: date | None) -> list[Finding]:
    match = _TO_PLAY.search(text) or _LEARNING_INSTRUMENT.search(text)
    what = match.group("what") if match else ""
    if what not in _INSTRUMENT_WORDS and what not in SPORTS:
        return []
    return [Finding("I", "learning", what, tense="present")]


def _lessons(text: str, occurred_on: date | None) -> list[Finding]:
    match = _LESSONS.search(text)
    if match is None or set(words(match.group("what"))) & _NOT_SUBJECTS:
        return []
    return [Finding("I", "learning", " ".join(match.group("what").split()), tense="present")]


PROPOSERS: tuple[Reader, ...] = (_to_play, _lessons)

TRIGGERS: Triggers = {
    _to_play: (_TO_PLAY, _LEARNING_INSTRUMENT),
    _lessons: (_LESSONS,),
}
"""For each reader, the patterns one of which must match a clause for it to find anything
(:mod:`.dispatch` skips it otherwise)."""
