"""Favourites told with the thing first, and titles the speaker loves.

"Spider-Man has always been a favorite of mine" and "I loved "The Long Walk"" are lasting
tastes (``prefers``), told in shapes the verb reader misses: the thing before the copula, or a
title in quotes after a past-tense verb. The thing must open the clause with a capital and be a
name or a short noun phrase (pronouns and "this/that one" refer to another message and form
nothing); a title must be quoted, capitalised and short, so "I loved "it"" and a quoted sentence
form nothing. A title loved by "we" is the household's, and the speaker is in it.
"""

from __future__ import annotations

import re
from datetime import date

from engram.formation.deterministic.dispatch import Reader, Triggers
from engram.formation.deterministic.ends import words
from engram.formation.deterministic.findings import Finding

_OF_MINE = re.compile(
    r"^(?P<what>[A-Z][\w'-]*(?:[\s-]+[\w'-]+){0,4}?)\s+(?:has\s+(?:always\s+)?been|is|was|'s)\s+"
    r"(?:always\s+|still\s+)?(?:a|an|one|another)\s+(?:all-time\s+|big\s+|real\s+|personal\s+)?"
    r"(?:favou?rite|fave)\s+of\s+mine\b"
)
_LOVED_TITLE = re.compile(
    r"^(?:I|[Ww]e)\s+(?:(?:really|absolutely|totally|just|also)\s+)?(?:love|loved|adore|adored"
    r"|enjoyed)\s+(?:watching\s+|reading\s+)?[\"\u201c](?P<title>[A-Z0-9][^\"\u201d\n]{0,48}?)"
    r"[,.!?]?[\"\u201d]"
)
_BACK_THEN = re.compile(
    r"\b(?:as a (?:kid|child|teen|teenager)|when I was|growing up|back then|back in|used to"
    r"|in (?:high school|college))\b",
    re.IGNORECASE,
)
"""A title loved as a kid is a memory, not a taste the speaker holds now."""
_NOT_THINGS = frozenset(
    {"it", "this", "that", "these", "those", "he", "she", "they", "one", "mine"}
)


def _of_mine(text: str, occurred_on: date | None) -> list[Finding]:
    match = _OF_MINE.match(text)
    if match is None:
        return []
    found = words(match.group("what"))
    if not found or found[0] in _NOT_THINGS or found[0] in {"i", "i'm", "i've", "my"}:
        return []
    return [Finding("I", "prefers", match.group("what"))]


def _loved_title(text: str, occurred_on: date | None) -> list[Finding]:
    match = _LOVED_TITLE.match(text)
    if match is None or _BACK_THEN.search(text):
        return []
    title = re.sub(r"^(?:The|A|An)\s+", "", match.group("title").strip())
    found = words(title)
    if not found or len(found) > 6 or found[0] in _NOT_THINGS:
        return []
    return [Finding("I", "prefers", title)]


PROPOSERS: tuple[Reader, ...] = (_of_mine, _loved_title)

TRIGGERS: Triggers = {
    _of_mine: (_OF_MINE,),
    _loved_title: (_LOVED_TITLE,),
}
"""For each reader, the patterns one of which must match a clause for it to find anything
(:mod:`.dispatch` skips it otherwise)."""
