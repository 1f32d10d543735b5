"""Patterns asked the cheap way first: a message a pattern cannot match is not searched.

Python's ``re`` tries a pattern that opens with a word boundary or alternatives at every
position of the text, and folds case character by character under ``IGNORECASE``, which makes
a search for one of many words (``\\b(?:said|says|told me|…)\\b``) three to five times slower
than the same pattern without the flag. Most clauses match none of a reader's patterns, so
:class:`Screened` asks two cheaper questions first and consults the original pattern only when
both say a match is possible:

1. **Needles.** From the parsed pattern, a set of literal strings one of which every match
   contains (a run of literal characters the match must go through; for alternatives, one from
   each). None of them in the text: no match. ``"passionate" in text`` costs a fraction of a
   regular-expression search.
2. **A case-sensitive twin** for an ``IGNORECASE`` pattern: the same pattern, letters
   lower-cased, without the flag, over the lower-cased text. When the twin has only a few
   needles (lower-case), they are tested first: a twin that opens with ``\\b`` is still tried at
   every position.

Many patterns over one text ask the first question together: :class:`NeedleIndex` finds the
needles of all of them in one Aho-Corasick pass (:mod:`ahocorasick`) and tells which patterns
(or groups of patterns, such as the triggers of a reader: :mod:`.deterministic.dispatch`) may
match. That is what turns "forty readers, each asking its own pattern" into one scan a clause
and a call to the few readers whose words are there.

Why the twin never changes an answer. For ASCII text ``t``, ``t.lower()`` has the same length
and the same word, space and digit characters at every position, so ``\\b``, ``\\w``, ``\\s``,
``\\d``, lookarounds and positions mean the same in both. A lower-cased literal matches a
character of ``t`` case-insensitively exactly when it equals that character lower-cased; a
character class to which the lower-case letter of each of its upper-case ASCII letters has been
added contains a character of ``t`` case-insensitively exactly when it contains it lower-cased
(negated classes too). So the twin over ``t.lower()`` matches where the original matches over
``t``, and its needles (lower-case) are needles of the original over ``t.lower()``. A pattern
with something the twin cannot stand for (a letter beyond ASCII, a section that switches the
flag), and any text that is not ASCII (where case folding reaches past ASCII: the long s folds
to ``s``), go straight to the original pattern. Every match object returned is the original
pattern's, over the original text.
"""

from __future__ import annotations

import re
import sys
import warnings
from collections.abc import Callable, Iterator, Sequence
from typing import Any, TypeVar

import ahocorasick

with warnings.catch_warnings():  # the parser's public name is deprecated, not the parser
    warnings.simplefilter("ignore", DeprecationWarning)
    import sre_compile as _compiler
    import sre_constants as _codes
    import sre_parse as _parser

__all__ = ["NeedleIndex", "Screened", "longest_match", "lowered", "screen", "screened"]

_T = TypeVar("_T")
_UPPER = frozenset(range(ord("A"), ord("Z") + 1))
_FEW = 4
"""Up to this many needles, ``in`` tests beat one search for any of them."""
_FEW_FOLDED = 8
"""Up to this many lower-case needles, ``in`` tests go before a case-insensitive twin."""
_MAX_RUN = 16
"""The most strings a run of small classes may stand for before it ends."""


class Screened:
    """A compiled pattern behind its needles and, when it ignores case, a case-sensitive twin.

    Offers the calls the readers use (``search``, ``match``, ``fullmatch``, ``finditer``,
    ``sub``), each answering exactly what the wrapped pattern answers.
    """

    __slots__ = ("_folded", "_folds", "_probe", "_twin", "needles", "pattern")

    def __init__(self, pattern: re.Pattern[str]) -> None:
        self.pattern = pattern
        self._folds = bool(pattern.flags & re.IGNORECASE)
        self._twin = _twin(pattern) if self._folds else None
        source = (
            _twin_tree(pattern) if self._folds else _parser.parse(pattern.pattern, pattern.flags)
        )
        found = _needles(source) if source is not None else None
        self.needles: tuple[str, ...] | None = tuple(sorted(found)) if found else None
        """Literal strings one of which every match contains (lower-case when the pattern
        ignores case), or ``None`` when the pattern guarantees none."""
        self._probe = (
            re.compile("|".join(re.escape(n) for n in self.needles))
            if self.needles and len(self.needles) > _FEW and not self._folds
            else None
        )
        """Many needles: one case-sensitive search for any of them, a single scan."""
        self._folded = (
            self.needles
            if self._twin is not None and self.needles and len(self.needles) <= _FEW_FOLDED
            else None
        )
        """A few lower-case needles of the twin, tested before the twin: a twin that opens
        with ``\\b`` or a lookaround is tried at every position of the text, and ``in`` is
        several times cheaper where no needle is there (most texts)."""

    @property
    def fast(self) -> bool:
        """Whether a cheap check applies at all."""
        return self._twin is not None or (not self._folds and self.needles is not None)

    def _impossible(self, text: str, how: str, pos: int, endpos: int) -> bool:
        """True only when the original pattern cannot match; never a false True. The needles
        are looked for in the whole text: a match within ``pos``..``endpos`` is in it too."""
        if not self._folds:
            if self._probe is not None:
                return self._probe.search(text) is None
            return _none_in(self.needles, text)
        twin = self._twin  # the twin over lower-cased text is itself the cheap check
        if twin is None or not text.isascii():
            return False
        low = text.lower()
        return _none_in(self._folded, low) or getattr(twin, how)(low, pos, endpos) is None

    def search(self, text: str, pos: int = 0, endpos: int = sys.maxsize) -> re.Match[str] | None:
        if self._impossible(text, "search", pos, endpos):
            return None
        return self.pattern.search(text, pos, endpos)

    def search_lowered(self, text: str, lowered: str | None) -> re.Match[str] | None:
        """``search(text)``, given ``lowered = text.lower()`` for ASCII text (``None`` for other
        text): a caller trying many patterns on one text lower-cases it once."""
        if self._folds:
            twin = self._twin
            if (
                twin is not None
                and lowered is not None
                and (_none_in(self._folded, lowered) or twin.search(lowered) is None)
            ):
                return None
        elif self._impossible(text, "search", 0, sys.maxsize):
            return None
        return self.pattern.search(text)

    def match(self, text: str, pos: int = 0, endpos: int = sys.maxsize) -> re.Match[str] | None:
        if self._impossible(text, "match", pos, endpos):
            return None
        return self.pattern.match(text, pos, endpos)

    def fullmatch(self, text: str, pos: int = 0, endpos: int = sys.maxsize) -> re.Match[str] | None:
        if self._impossible(text, "fullmatch", pos, endpos):
            return None
        return self.pattern.fullmatch(text, pos, endpos)

    def finditer(
        self, text: str, pos: int = 0, endpos: int = sys.maxsize
    ) -> Iterator[re.Match[str]]:
        if self._impossible(text, "search", pos, endpos):
            return iter(())
        return self.pattern.finditer(text, pos, endpos)

    def sub(self, repl: str | Callable[[re.Match[str]], str], text: str, count: int = 0) -> str:
        if self._impossible(text, "search", 0, sys.maxsize):
            return text
        return self.pattern.sub(repl, text, count)


class NeedleIndex:
    """Which of many groups of patterns may match a text, told by one pass over it.

    A group may match only when one of its patterns' needles is in the text. Each needle is
    looked for lower-cased in the lower-cased text, all at once, with an Aho-Corasick automaton
    (:mod:`ahocorasick`): one scan that reports every needle present, overlapping ones too, in
    place of a ``needle in text`` test per needle per pattern.

    Why the answer can only rule a match out, never in. Take ASCII text ``t``. A needle ``n`` of
    a case-sensitive pattern is in ``t`` whenever the pattern matches ``t``, and then
    ``n.lower()`` is in ``t.lower()`` (lower-casing ASCII maps character to character). The
    needles of a case-insensitive pattern are its twin's, already lower-case, and the twin
    matches ``t.lower()`` exactly when the pattern matches ``t`` (module docstring). So a group
    none of whose lower-cased needles is in ``t.lower()`` has no pattern that matches ``t``.
    A group with a pattern that guarantees no needle is always possible, and so is every
    group for text that is not ASCII.
    """

    __slots__ = ("_all", "_always", "_automaton", "_searching")

    def __init__(self, groups: Sequence[Sequence[Screened]]) -> None:
        by_needle: dict[str, int] = {}
        self._always = 0
        for position, group in enumerate(groups):
            bit = 1 << position
            if not group or any(pattern.needles is None for pattern in group):
                self._always |= bit
                continue
            for pattern in group:
                for needle in pattern.needles or ():
                    key = needle.lower()
                    by_needle[key] = by_needle.get(key, 0) | bit
        self._all = (1 << len(groups)) - 1
        self._automaton = ahocorasick.Automaton()
        for needle, bits in by_needle.items():
            self._automaton.add_word(needle, bits)
        self._searching = bool(by_needle)
        if self._searching:
            self._automaton.make_automaton()

    @classmethod
    def of(cls, patterns: Sequence[Screened]) -> NeedleIndex:
        """An index with one group per pattern."""
        return cls([(pattern,) for pattern in patterns])

    def chosen(self, text: str, items: Sequence[_T]) -> list[_T]:
        """The items, one per group, whose group may match ``text``, in order."""
        possible = self.possible(text)
        if possible == self._all:
            return list(items)
        chosen: list[_T] = []
        while possible:  # the set bits only, lowest (first item) first
            lowest = possible & -possible
            chosen.append(items[lowest.bit_length() - 1])
            possible ^= lowest
        return chosen

    def possible(self, text: str) -> int:
        """A bit mask: bit ``i`` set when group ``i`` may match ``text`` (unset: cannot)."""
        if not text.isascii():
            return self._all
        mask = self._always
        if self._searching:
            for _end, bits in self._automaton.iter(text.lower()):
                mask |= bits
        return mask


def longest_match(pattern: re.Pattern[str]) -> int:
    """The most characters a match of ``pattern`` can span (from the parsed pattern)."""
    width: int = _parser.parse(pattern.pattern, pattern.flags).getwidth()[1]
    return width


def _none_in(needles: tuple[str, ...] | None, text: str) -> bool:
    """Whether ``needles`` are known and none of them is in ``text``."""
    if needles is None:
        return False
    for needle in needles:  # noqa: SIM110 - a generator costs more than the tests
        if needle in text:
            return False
    return True


def lowered(text: str) -> str | None:
    """What :meth:`Screened.search_lowered` takes: the lower-cased text when it is ASCII."""
    return text.lower() if text.isascii() else None


def screen(pattern: re.Pattern[str]) -> Screened:
    return Screened(pattern)


def screened(source: str, flags: int = 0) -> Screened:
    """``re.compile(source, flags)``, screened: a drop-in where a reader compiles a pattern."""
    return Screened(re.compile(source, flags))


def _needles(items: Any) -> set[str] | None:
    """Literal strings one of which every match of the parsed sequence ``items`` contains: the
    rarest (:func:`_commonness`) of its elements' sets; ``None`` when no element
    guarantees one. A run of literal characters, and of small classes (``[Mm]y``: ``My`` or
    ``my``), is one set of strings; alternatives give the union of their own sets (each must
    give one); a repeat at least once gives its body's; anything else (wider classes,
    assertions, optional parts) gives nothing and ends a run."""
    found: list[set[str]] = []
    run: set[str] = set()
    for op, av in items:
        letters = _small_class(av) if op is _codes.IN else None
        if op is _codes.LITERAL or (letters and len(run or {""}) * len(letters) <= _MAX_RUN):
            run = {s + c for s in (run or {""}) for c in (letters or [chr(av)])}
            continue
        if run:
            found.append(run)
            run = set()
        inner = _inner_needles(op, av)
        if inner:
            found.append(inner)
    if run:
        found.append(run)
    return min(found, key=_commonness) if found else None


def _commonness(strings: set[str]) -> float:
    """How likely a text holds one of ``strings``, roughly: short strings are everywhere, and
    each more string is one more chance (and one more test). The screen keeps the rarest set.
    Length counts cubed: "my" or "on" is in most clauses ("myself", "done", "month"), so one
    of them is commoner than any of a dozen words of five letters (measured on the dev
    conversations: squared, the screens kept "my" over a list of kin words and "on" over a list
    of trips, and the cube cut the arm's instructions by 2.5%)."""
    return sum(1 / len(s) ** 3 for s in strings)


def _small_class(items: Any) -> list[str] | None:
    """The characters of a class made of a few literal characters (``[Mm]``), else ``None``."""
    if len(items) > _FEW or any(op is not _codes.LITERAL for op, _ in items):
        return None
    return sorted({chr(av) for _, av in items})


def _inner_needles(op: Any, av: Any) -> set[str] | None:
    if op is _codes.SUBPATTERN:
        return _needles(av[3])
    if op is _codes.ATOMIC_GROUP:
        return _needles(av)
    if op in (_codes.MAX_REPEAT, _codes.MIN_REPEAT, _codes.POSSESSIVE_REPEAT) and av[0] >= 1:
        return _needles(av[2])
    if op is _codes.BRANCH:
        union: set[str] = set()
        for branch in av[1]:
            strings = _needles(branch)
            if not strings:
                return None
            union |= strings
        return union
    return None


def _twin_tree(pattern: re.Pattern[str]) -> Any:
    """The parsed pattern with its letters lower-cased and its classes closed under
    lower-casing, for use without ``IGNORECASE``; ``None`` when that might answer otherwise."""
    parsed = _parser.parse(pattern.pattern, pattern.flags & ~re.IGNORECASE)
    parsed.state.flags &= ~re.IGNORECASE  # a leading (?i) means what the flag means
    return parsed if _lower_in_place(parsed) else None


def _twin(pattern: re.Pattern[str]) -> re.Pattern[str] | None:
    """The case-sensitive twin of a case-insensitive pattern, for lower-cased ASCII text."""
    parsed = _twin_tree(pattern)
    if parsed is None:
        return None
    twin: re.Pattern[str] = _compiler.compile(parsed, pattern.flags & ~re.IGNORECASE)
    return twin


def _lower_in_place(items: Any) -> bool:
    """Lower-case every literal and close every class under lower-casing, in the parsed
    pattern; False when something is not of the kind the module docstring names (a letter
    outside ASCII, a section that switches ``IGNORECASE``, an operator not foreseen)."""
    for index, (op, av) in enumerate(items):
        if op in (_codes.LITERAL, _codes.NOT_LITERAL):
            if not _has_no_case_beyond_ascii(av):
                return False
            items[index] = (op, av + 32 if av in _UPPER else av)
        elif op is _codes.IN:
            if not _lower_class(av):
                return False
        elif op is _codes.SUBPATTERN:
            if (av[1] | av[2]) & re.IGNORECASE or not _lower_in_place(av[3]):
                return False
        elif op in _NESTED:
            if not all(_lower_in_place(sub) for sub in _NESTED[op](av) if sub is not None):
                return False
        elif op not in (_codes.ANY, _codes.AT, _codes.GROUPREF, _codes.CATEGORY):
            return False
    return True


_NESTED: dict[Any, Callable[[Any], list[Any]]] = {
    _codes.BRANCH: lambda av: list(av[1]),
    _codes.MAX_REPEAT: lambda av: [av[2]],
    _codes.MIN_REPEAT: lambda av: [av[2]],
    _codes.POSSESSIVE_REPEAT: lambda av: [av[2]],
    _codes.ASSERT: lambda av: [av[1]],
    _codes.ASSERT_NOT: lambda av: [av[1]],
    _codes.ATOMIC_GROUP: lambda av: [av],
    _codes.GROUPREF_EXISTS: lambda av: [av[1], av[2]],
}
"""Where each compound operator keeps the sub-patterns a match goes through."""


def _has_no_case_beyond_ascii(code: int) -> bool:
    """An ASCII character, or one with no case at all (not a letter): never a character that
    folds onto ASCII (the long s, the Kelvin sign, the dotless i)."""
    char = chr(code)
    return char.isascii() or (not char.isalpha() and char.lower() == char == char.upper())


def _lower_class(items: list[Any]) -> bool:
    """Add to a character class the lower-case letter of every upper-case ASCII letter in it:
    over lower-cased text it then holds a character exactly when the original class holds it
    case-insensitively (a negated class too)."""
    members: set[int] = set()
    for op, av in items:
        if op is _codes.LITERAL:
            members.add(av)
        elif op is _codes.RANGE:
            members.update(range(av[0], av[1] + 1))
        elif op not in (_codes.NEGATE, _codes.CATEGORY):
            return False
    if not all(_has_no_case_beyond_ascii(code) for code in members):
        return False
    items.extend((_codes.LITERAL, code + 32) for code in sorted(members & _UPPER))
    return True
