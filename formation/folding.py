"""Case-insensitive patterns, searched fast on ASCII text: the same answers, a quarter of the cost.

Python's ``re`` folds case character by character under ``IGNORECASE``, which makes a search for
one of many words (``\\b(?:said|says|told me|…)\\b``) three to five times slower than the same
pattern without the flag. Most clauses are ASCII and match none of a reader's words, so
:class:`Folded` first asks the question the cheap way — the same pattern without ``IGNORECASE``
over the lower-cased text — and consults the original pattern only when that finds something.

Why that never changes an answer. For ASCII text ``t``, ``t.lower()`` has the same length and
the same word, space and digit characters at every position, so ``\\b``, ``\\w``, ``\\s``,
``\\d``, lookarounds and positions mean the same in both. A lower-case literal matches a
character of ``t`` case-insensitively exactly when it equals that character lower-cased; a
character class that holds, with every upper-case ASCII letter, its lower-case letter (``[a-z]``,
``[A-Za-z]``, ``[\\w-]``) contains a character of ``t`` case-insensitively exactly when it contains
it lower-cased. So, when the pattern's literals and classes are of that kind (checked when the
pattern is wrapped, from its parsed form), the case-sensitive pattern over ``t.lower()`` matches
at the same places as the original over ``t``: no match there means no match at all. A pattern
that is not of that kind, or a text that is not ASCII (where case folding reaches past
ASCII: the long s folds to ``s``), goes straight to the original pattern. Every match object
returned is the original pattern's, over the original text.
"""

from __future__ import annotations

import re
import sys
import warnings
from collections.abc import Callable, Iterator
from typing import Any

with warnings.catch_warnings():  # the parser's public name is deprecated, not the parser
    warnings.simplefilter("ignore", DeprecationWarning)
    import sre_compile as _compiler
    import sre_constants as _codes
    import sre_parse as _parser

__all__ = ["Folded", "fold"]

_UPPER = frozenset(range(ord("A"), ord("Z") + 1))


class Folded:
    """A compiled case-insensitive pattern with a case-sensitive twin for lower-cased ASCII text.

    Offers the calls the readers use (``search``, ``match``, ``fullmatch``, ``finditer``,
    ``sub``), each answering exactly what the wrapped pattern answers.
    """

    __slots__ = ("_fast", "pattern")

    def __init__(self, pattern: re.Pattern[str]) -> None:
        self.pattern = pattern
        self._fast = _twin(pattern)

    @property
    def fast(self) -> bool:
        """Whether the cheap check applies (a pattern of the kind the module docstring names)."""
        return self._fast is not None

    def search(self, text: str, pos: int = 0, endpos: int = sys.maxsize) -> re.Match[str] | None:
        fast = self._fast
        if fast is not None and text.isascii() and fast.search(text.lower(), pos, endpos) is None:
            return None
        return self.pattern.search(text, pos, endpos)

    def match(self, text: str, pos: int = 0, endpos: int = sys.maxsize) -> re.Match[str] | None:
        fast = self._fast
        if fast is not None and text.isascii() and fast.match(text.lower(), pos, endpos) is None:
            return None
        return self.pattern.match(text, pos, endpos)

    def fullmatch(self, text: str, pos: int = 0, endpos: int = sys.maxsize) -> re.Match[str] | None:
        fast = self._fast
        if (
            fast is not None
            and text.isascii()
            and fast.fullmatch(text.lower(), pos, endpos) is None
        ):
            return None
        return self.pattern.fullmatch(text, pos, endpos)

    def finditer(
        self, text: str, pos: int = 0, endpos: int = sys.maxsize
    ) -> Iterator[re.Match[str]]:
        if self.search(text, pos, endpos) is None:
            return iter(())
        return self.pattern.finditer(text, pos, endpos)

    def sub(self, repl: str | Callable[[re.Match[str]], str], text: str, count: int = 0) -> str:
        fast = self._fast
        if fast is not None and text.isascii() and fast.search(text.lower()) is None:
            return text
        return self.pattern.sub(repl, text, count)


def fold(pattern: re.Pattern[str]) -> Folded:
    return Folded(pattern)


def _twin(pattern: re.Pattern[str]) -> re.Pattern[str] | None:
    """The pattern without ``IGNORECASE`` and with its letters lower-cased, when that answers
    the same over lower-cased ASCII text; ``None`` when it might not."""
    if not pattern.flags & re.IGNORECASE:
        return None
    flags = pattern.flags & ~re.IGNORECASE
    parsed = _parser.parse(pattern.pattern, flags)
    if not _lower_in_place(parsed):
        return None
    twin: re.Pattern[str] = _compiler.compile(parsed, flags)
    return None if twin.flags & re.IGNORECASE else twin  # an inline (?i): leave it alone


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
