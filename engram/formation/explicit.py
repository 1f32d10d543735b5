"""The explicit cue, defined once: "remember that …", "don't forget …", "please note that …".

Two readers need it. The deterministic arm strips the cue and reads the claim that follows as
if said plainly; the core marks a candidate explicit (skipping the salience threshold, never a
gate) only when its quote lies inside what the user asked to be remembered. "I like jazz.
Remember that I live in Porto." raises "I live in Porto", not "I like jazz": the remembered
part runs from the cue to the end of its sentence.

A cue counts only where a request can start: at the start of the message or a sentence, after
a comma, or after a softener ("please", "also", "can you"). "I don't remember that film" is no
request.
"""

from __future__ import annotations

import re

from engram.formation.screening import screened

CUE = (
    r"(?:remember|don't forget|do not forget|keep in mind|make a note|note for (?:later|the future)"
    r"|note)(?:\s+that\b|\s+this\b)?\s*[,:]?"
)
_SOFTENER = r"(?:please|pls|also|and|just|oh|hey|so|(?:can|could|would|will) you)"
EXPLICIT_PREFIX = screened(r"^(?:" + _SOFTENER + r"[,]?\s+)*" + CUE + r"\s+", re.IGNORECASE)
"""The cue at the start of a clause, with its softeners: what the arm strips before reading."""

_CUE_ANYWHERE = screened(
    r"(?:^|(?<=[.!?;:\n])\s*|(?<=,)\s*|\s*\b(?=" + _SOFTENER + r"\b))"
    r"(?P<cue>(?:" + _SOFTENER + r"[,]?\s+)*" + CUE + r")",
    re.IGNORECASE,
)
"""Screened (:mod:`.screening`): a cue can start at almost any position, so the search is
slow, and most messages hold no cue word at all."""
_SENTENCE_END = re.compile(r"[.!?\n]")


def remembered_ranges(content: str) -> list[tuple[int, int]]:
    """Character ranges a user asked to be remembered: from each cue to its sentence's end."""
    text = content.replace("\u2019", "'")
    ranges: list[tuple[int, int]] = []
    for match in _CUE_ANYWHERE.finditer(text):
        start = match.start("cue")
        end_match = _SENTENCE_END.search(text, match.end("cue"))
        end = end_match.start() if end_match else len(text)
        if end > match.end("cue"):
            ranges.append((start, end))
    return ranges


def within(ranges: list[tuple[int, int]], start: int, end: int) -> bool:
    """Whether ``[start, end)`` lies inside one remembered range (touching its cue is fine)."""
    return any(r_start <= start and end <= r_end for r_start, r_end in ranges)
