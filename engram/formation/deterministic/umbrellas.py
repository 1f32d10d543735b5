"""A list of owned things under a word that only gathers them: "lots of gear, like a tent, a
stove and a kayak", "a bunch of instruments: a cello, a banjo and two guitars", "a collection
of sneakers, jerseys and signed caps".

The gathering word ("gear", "stuff", "instruments", "a collection of") names no one thing a
person could be asked about; the things after it are what the speaker owns. So the list is read
in its place, each item as its own possession (:mod:`.possession`), and the umbrella forms
nothing. A list with no umbrella before it reads as before.
"""

from __future__ import annotations

import re

from engram.formation.deterministic.nouns import closed

__all__ = ["under_umbrella"]

_GATHERING = closed(
    "gear stuff things items equipment instruments tools gadgets toys supplies kit kits"
    " belongings possessions collection collections pieces bits"
)
"""Words that gather owned things without naming one."""
_INTRODUCED = re.compile(
    r"^(?P<head>[^,:;\u2013\u2014]+?)\s*(?:,\s*(?:like|such\s+as|including|e\.g\.)"
    r"|:|\s[-\u2013\u2014]+|\s\(\s*(?:like|such\s+as|including)?)\s+(?P<items>.+)$",
    re.IGNORECASE,
)
""""<umbrella>, like A, B and C", "<umbrella>: A, B and C", "<umbrella> - A, B and C"."""
_COLLECTION_OF = re.compile(
    r"^(?:(?:a|an|my|our|this|that)\s+)?(?:(?:big|small|huge|little|growing|whole|nice)\s+)?"
    r"(?:collection|bunch|set|pile|stack)\s+of\s+(?P<items>.+)$",
    re.IGNORECASE,
)
""""a collection of A, B and C": the collection is the things."""
_TAIL = re.compile(r"\s+(?:for|to|that|which|in)\s+.*$", re.IGNORECASE)


def under_umbrella(rest: str) -> str | None:
    """The list of things ``rest`` gathers under an umbrella word, or ``None`` when it has
    none: what the speaker owns is the list, not the umbrella."""
    introduced = _INTRODUCED.match(rest)
    if introduced is not None:
        head = _TAIL.sub("", introduced.group("head")).strip().lower().split()
        if head and head[-1] in _GATHERING:
            return introduced.group("items").rstrip(")").strip()
    collected = _COLLECTION_OF.match(rest)
    if collected is not None and ("," in rest or " and " in rest):
        return collected.group("items").strip()
    return None
