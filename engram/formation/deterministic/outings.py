"""Outings told with the people taken along, or as something the speaker has done.

"I took my kids camping last weekend" and "I've gone kayaking a few times" are the speaker's
outings (``participated_in``, past), told in shapes the "went kayaking" pattern
(:mod:`.pursuits`) misses: the people or pets between verb and outing, or the perfect "have
gone". The outing must be a known pastime gerund, and the people taken along must be family,
friends or pets, so "I took my time deciding" or "I took my car washing" form nothing.
"""

from __future__ import annotations

import re
from datetime import date

from engram.formation.deterministic.dates import ground
from engram.formation.deterministic.dispatch import Reader, Triggers
from engram.formation.deterministic.findings import Finding
from engram.formation.deterministic.nouns import HOBBY_GERUNDS, closed
from engram.formation.deterministic.phrases import ADVERBS

_ALONG = (
    r"fam|family|kids|kid|son|daughter|children|boys|girls|dog|dogs|pup|puppy|husband|wife"
    r"|partner|boyfriend|girlfriend|friends?|parents|mom|mum|dad|sister|brother|nephew|niece"
    r"|grandkids|students|class|team"
)
_TOOK_ALONG = re.compile(
    r"\bI\s+" + ADVERBS + r"(?:took|brought)\s+(?:my|our|the)\s+(?:(?:little|two|three|whole)\s+)?"
    r"(?:" + _ALONG + r")\s+(?P<what>[a-z]+ing)\b"
)
_HAVE_GONE = re.compile(r"\bI(?:'ve| have)\s+" + ADVERBS + r"gone\s+(?P<what>[a-z]+ing)\b")
_OUTINGS = HOBBY_GERUNDS | closed("riding sailing paddleboarding snorkeling")


def _outing(text: str, occurred_on: date | None) -> list[Finding]:
    match = _TOOK_ALONG.search(text) or _HAVE_GONE.search(text)
    if match is None or match.group("what") not in _OUTINGS:
        return []
    what, when = match.group("what"), ground(text, occurred_on)
    if when is None:
        return [Finding("I", "participated_in", what, tense="past")]
    # named with its date, one belief, as :func:`.events._dated` names events
    return [Finding("I", "participated_in", f"{what} ({when})", tense="past")]


PROPOSERS: tuple[Reader, ...] = (_outing,)

TRIGGERS: Triggers = {
    _outing: (_TOOK_ALONG, _HAVE_GONE),
}
"""For each reader, the patterns one of which must match a clause for it to find anything
(:mod:`.dispatch` skips it otherwise)."""
