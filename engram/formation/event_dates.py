"""A model's event date goes into its event, as the pattern arm's does.

A model asked about "I ran my first half marathon last Saturday" proposes the event
(I, participated_in, half marathon) and, beside it, a date of its own: (half marathon,
occurred_on, 2023-05-06). Kept apart, the date is a belief nobody reads ("a half marathon
happened on …") and the event a belief without its date. The pattern arm names a dated event
with its date instead, one belief per event: (I, participated_in, half marathon (2023-05-06))
(:func:`formation.deterministic.events._dated`). This does the same with a model's proposals,
before admission: an ``occurred_on`` whose subject is an event the message also claims
(``participated_in``, ``created``, ``contributed_to``: the same words, articles and
possessives aside; or the message's only event) is folded into that event's name and is no
claim of its own. A date of an event the message claims nothing else about stays as proposed.
Pure.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import replace

from engram.formation.proposals import Proposal

EVENT_RELATIONS = frozenset({"participated_in", "created", "contributed_to"})
"""Relations whose object is an event or a work, which a date can name."""

_LEADING = re.compile(r"^(?:(?:a|an|the|my|our|his|her|their)\s+)+")
_DATED = re.compile(r"\([^()]*\d{4}[^()]*\)\s*$")
"""An event name that already ends with its date: "pride parade (2023-08-11)"."""


def _words(text: str) -> str:
    return _LEADING.sub("", " ".join(text.lower().split()))


def fold_event_dates(proposals: Sequence[Proposal]) -> list[Proposal]:
    """``proposals`` with every date of a claimed event folded into that event's name."""
    events = [
        i
        for i, p in enumerate(proposals)
        if p.relation in EVENT_RELATIONS and p.polarity == "assert"
    ]
    if not events:
        return list(proposals)
    folded: dict[int, Proposal] = {}
    dropped: set[int] = set()
    for index, proposal in enumerate(proposals):
        if proposal.relation != "occurred_on" or proposal.polarity != "assert":
            continue
        target = _event_of(proposal, proposals, events)
        if target is None:
            continue
        dropped.add(index)
        event = folded.get(target, proposals[target])
        if not _DATED.search(event.object):
            when = " ".join(proposal.object.split())
            folded[target] = replace(event, object=f"{event.object.strip()} ({when})")
    return [folded.get(i, p) for i, p in enumerate(proposals) if i not in dropped]


def _event_of(date: Proposal, proposals: Sequence[Proposal], events: list[int]) -> int | None:
    """The event a date belongs to: the one of the same name, else the message's only one."""
    named = _words(date.subject)
    same = [i for i in events if _words(_LEADING.sub("", proposals[i].object)) == named]
    if same:
        return same[0]
    return events[0] if len(events) == 1 else None
