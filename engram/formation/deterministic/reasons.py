"""A taste told with its reason after it: "I can't stand crowds, which is why I run at dawn".

The reason cut of :mod:`.reading` reads a clause from the "I" after "which is why" / "that's
why" on, so "moments like that remind me why I love climbing" forms the taste it tells. When the
words before the reason are themselves the speaker's statement ("I can't stand crowds"), they
are a fact of their own: the first half is read as a clause too, so both halves form. Only a
head that opens with "I" and is not a reason of its own is read: "Maybe that's why I love it"
and "Moments like that remind me why …" have no first-person head, and keep their one reading.
"""

from __future__ import annotations

import re

__all__ = ["reason_head"]

_REASON_JOIN = re.compile(
    r"\s*[,;:\u2013\u2014-]?\s*(?:and\s+|so\s+)?(?:which\s+is|that(?:'s|\s+is)|this\s+is)\s+"
    r"(?:(?:exactly|precisely|partly|also|just|probably)\s+)?(?:why|how\s+come)\s+(?=I\s|I'm\s|I've\s)",
    re.IGNORECASE,
)
_FIRST_PERSON_HEAD = re.compile(r"^I(?:\s|'m\s|'ve\s)")


def reason_head(text: str) -> str | None:
    """The speaker's own statement before "…, which is why I …", or ``None``.

    ``text`` is the clause as said (apostrophes normalised). The head must open with "I" and
    say something on its own (three words at least): "I, which is why" is no statement."""
    match = _REASON_JOIN.search(text)
    if match is None or match.start() == 0:
        return None
    head = text[: match.start()].rstrip(" ,;:")
    if not _FIRST_PERSON_HEAD.match(head) or len(head.split()) < 3:
        return None
    return head
