"""Span verification: find a proposed quote in the message and cite the message's own bytes.

First an exact match, then one that treats any run of whitespace as a single space. Case is
never ignored: a quote in the wrong case was retyped, not copied, and a tolerance wide enough
for that is wide enough to match a sentence somebody made up. The first occurrence wins.
"""

from __future__ import annotations

import re
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Span:
    """A located quote: the message's own text and its UTF-8 byte offsets."""

    quote: str
    start: int
    end: int


def _byte_offset(text: str, char_index: int) -> int:
    return len(text[:char_index].encode("utf-8"))


def _span(content: str, start: int, end: int, ascii: bool | None) -> Span:
    if ascii if ascii is not None else content.isascii():
        return Span(quote=content[start:end], start=start, end=end)
    return Span(
        quote=content[start:end],
        start=_byte_offset(content, start),
        end=_byte_offset(content, end),
    )


def locate(quote: str, content: str, *, ascii: bool | None = None) -> Span | None:
    """The first place ``quote`` occurs in ``content``, or ``None`` when it does not.

    The returned quote is always ``content[start:end]`` (in bytes), never the proposed text.
    ``ascii`` is ``content.isascii()`` when the caller knows it (one message is searched for
    every proposal of it): ASCII has one byte a character, so no prefix needs encoding.
    """
    stripped = quote.strip()
    if not stripped:
        return None
    index = content.find(stripped)
    if index >= 0:
        return _span(content, index, index + len(stripped), ascii)
    words = stripped.split()
    pattern = r"\s+".join(re.escape(word) for word in words)
    match = re.search(pattern, content)
    if match is None:
        return None
    return _span(content, match.start(), match.end(), ascii)


def quote_at(content: str, start: int, end: int) -> str:
    """The text at a byte span of ``content``: how a stored citation is re-checked."""
    return content.encode("utf-8")[start:end].decode("utf-8")
