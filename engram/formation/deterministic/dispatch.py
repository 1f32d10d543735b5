"""Dispatch per clause: run only the readers whose trigger can occur in the clause.

Most readers find nothing in most clauses, and each of them costs a Python call and a pattern
search to say so: about forty readers at 0.2 to 5 µs a clause, with no single hot spot. Each
reader module therefore names, beside its readers, the **trigger** of each: the patterns one of
which must find something in the clause for the reader to find anything (a reader that opens
with ``match = _PATTERN.search(text)`` and returns ``[]`` on ``None`` is triggered by
``_PATTERN``). :class:`Readers` derives from those patterns the literal needles their matches
must contain (:mod:`formation.screening`), looks for all of them in one pass over the clause,
and calls, in their order, only the readers whose needles are there. A reader without a
declared trigger is always called. Families of readers that read the same clause share one
index (:func:`families`), so one pass serves them all.

Why skipping never changes a finding: a reader that is skipped has no trigger pattern that
matches the clause (:class:`~formation.screening.NeedleIndex` only rules matches out), and by
its declaration such a reader returns ``[]``; the readers that run are called in the same order
on the same text, so the concatenated findings are the same list. The declarations are checked
by ``tests/unit/formation/test_dispatch.py`` on every corpus clause; the needles are derived,
never written by hand, so a changed pattern cannot leave a stale trigger list behind.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from datetime import date

from engram.formation.deterministic.findings import Finding
from engram.formation.screening import NeedleIndex, Screened, screen

__all__ = ["ClauseTriggers", "Gates", "Reader", "Readers", "Trigger", "Triggers", "families"]

Reader = Callable[[str, date | None], list[Finding]]
Trigger = re.Pattern[str] | Screened
Triggers = Mapping[Reader, tuple[Trigger, ...]]
"""For a reader, the patterns one of which must find something in a clause (``search``) for
the reader to find anything in it."""


ClauseTriggers = Mapping[Callable[..., object], tuple[Trigger, ...]]
"""Triggers of readers of any signature (``text`` alone, or with the episode's date; findings
or what a caller makes of them), for
:class:`Gates`."""


def _screened(trigger: Trigger) -> Screened:
    return trigger if isinstance(trigger, Screened) else screen(trigger)


class Readers:
    """Readers called in order on a clause, each only when its trigger may occur in it; their
    bits in the index they share with other families start at ``offset``."""

    __slots__ = ("_mask", "_offset", "groups", "readers", "triggers")

    def __init__(self, readers: Sequence[Reader], triggers: Triggers, *, offset: int = 0) -> None:
        self.readers = tuple(readers)
        self.triggers = {reader: triggers.get(reader, ()) for reader in self.readers}
        self.groups = [tuple(_screened(t) for t in self.triggers[r]) for r in self.readers]
        """Each reader's trigger patterns, screened: its group in the shared index."""
        self._offset = offset
        self._mask = (1 << len(self.readers)) - 1

    def read(self, text: str, occurred_on: date | None, possible: int) -> list[Finding]:
        """Every finding of every reader on ``text``, in reader order; ``possible`` is the
        shared index's answer for ``text`` (:func:`families`). Only the set bits are visited,
        lowest (first reader) first: a clause wakes a few readers of dozens."""
        bits = (possible >> self._offset) & self._mask
        findings: list[Finding] = []
        readers = self.readers
        while bits:
            lowest = bits & -bits
            findings += readers[lowest.bit_length() - 1](text, occurred_on)
            bits ^= lowest
        return findings


def families(
    *declared: tuple[Sequence[Reader], Triggers],
) -> tuple[NeedleIndex, tuple[Readers, ...]]:
    """Families of readers on one needle index: one pass over a clause serves them all."""
    found: list[Readers] = []
    offset = 0
    for readers, triggers in declared:
        found.append(Readers(readers, triggers, offset=offset))
        offset += len(readers)
    return NeedleIndex([group for family in found for group in family.groups]), tuple(found)


class Gates:
    """Which of a few readers may find something in a clause, told by one pass over it.

    For readers a caller runs in its own order and combines its own way (a reader whose
    findings decide what another keeps), where :class:`Readers` would call them all in one
    list: :meth:`possible` is the index's answer for the clause, and ``possible & bit(reader)``
    says whether ``reader`` can find anything there. Skipping a reader whose bit is unset never
    changes a finding, for the reason the module docstring gives."""

    __slots__ = ("_bits", "_index", "triggers")

    def __init__(self, triggers: ClauseTriggers) -> None:
        self.triggers = dict(triggers)
        self._bits = {reader: 1 << position for position, reader in enumerate(triggers)}
        self._index = NeedleIndex(
            [tuple(_screened(t) for t in declared) for declared in triggers.values()]
        )

    def bit(self, reader: Callable[..., object]) -> int:
        return self._bits[reader]

    def possible(self, text: str) -> int:
        return self._index.possible(text)
