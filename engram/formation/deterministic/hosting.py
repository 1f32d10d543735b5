"""Events the speaker is putting on: "I'm throwing a housewarming party", "I'm having an art show".

A present progressive with an event the speaker hosts is an arrangement ahead, a plan worth
remembering (an agent may ask how it went): ``intends_to`` "hold <event>", weak like every
plan (:mod:`.plans`). "having" is also how people tell a passing state ("I'm having a hard
day", "I'm having a class right now"), so with "having" a time ahead must be named ("next
month", "this weekend", "tomorrow", "coming up"); hosting, throwing, holding and organising are
arrangements in themselves. The event must be named by an event noun, and a wish or a hedge
stays silent (:mod:`.mood`).
"""

from __future__ import annotations

import re
from datetime import date

from engram.formation.deterministic.dispatch import Reader, Triggers
from engram.formation.deterministic.findings import WEAK_CONFIDENCE, Finding
from engram.formation.deterministic.phrases import ADVERBS
from engram.formation.deterministic.pursuits import EVALUATIVE, named_event, short_phrase

_HOSTING = re.compile(
    r"\b(?:I(?:'m| am)|[Ww]e(?:'re| are))\s+"
    + ADVERBS
    + r"(?P<verb>having|hosting|throwing|holding|organi[sz]ing"
    r"|putting on|putting together|setting up)\s+(?:a|an|my)\s+(?:(?:first|own|big|little|small)\s+)?(?P<event>[^,.;!?]+)"
)
_PLACE_TAIL = re.compile(r"\s+(?:at|in|on|near|for|with)\s+")
_AHEAD = re.compile(
    r"\b(?:next\s+\w+|this\s+(?:week|weekend|month|year|spring|summer|fall|autumn|winter"
    r"|friday|saturday|sunday)|tomorrow|tonight|coming up|soon|in\s+(?:a|two|three|a few)\s+"
    r"(?:days|weeks|months))\b",
    re.IGNORECASE,
)


def _hosting(text: str, occurred_on: date | None) -> list[Finding]:
    match = _HOSTING.search(text)
    if match is None or (match.group("verb") == "having" and not _AHEAD.search(text)):
        return []
    where = _PLACE_TAIL.split(match.group("event"), maxsplit=1)[0]  # "party at my flat"
    event = short_phrase(EVALUATIVE.sub("", where))
    if not event or not named_event(event):
        return []
    return [Finding("I", "intends_to", f"hold {event}", confidence=WEAK_CONFIDENCE)]


PROPOSERS: tuple[Reader, ...] = (_hosting,)

TRIGGERS: Triggers = {
    _hosting: (_HOSTING,),
}
"""For each reader, the patterns one of which must match a clause for it to find anything
(:mod:`.dispatch` skips it otherwise)."""
