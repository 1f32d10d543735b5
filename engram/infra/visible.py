"""Words shown as they are: invisible controls in someone's text are made visible.

Engram stores every Unicode scalar value a person (or a page, or a tool) sent, controls
included, and formation judges them. Displaying them is another matter: a right-to-left override
(U+202E) makes ``You live in \\u202eaksalA`` read "You live in Alaska" on a page; a zero-width
space or a tag character hides words from the reader but not from a model; an escape character
rewrites a terminal. Wherever Engram shows a stored string to a person — the inspector's pages,
the CLI's tables — it goes through :func:`shown`, which replaces each such character by a
visible marker naming it (``⟨U+202E right-to-left override⟩``) and leaves every other character
as it is. The stored text never changes.

What is marked: the format characters (Unicode category Cf: bidirectional controls, zero-width
space, word joiner, byte order mark, tag characters, soft hyphen …) and the control characters
(Cc) — except tab, line feed and carriage return, which text uses, and the zero-width joiner and
non-joiner (U+200D, U+200C), which Persian, Indic scripts and emoji sequences need.
"""

from __future__ import annotations

import re
import unicodedata

_BIDI = {
    0x061C: "arabic letter mark",
    0x200E: "left-to-right mark",
    0x200F: "right-to-left mark",
    0x202A: "left-to-right embedding",
    0x202B: "right-to-left embedding",
    0x202C: "pop directional formatting",
    0x202D: "left-to-right override",
    0x202E: "right-to-left override",
    0x2066: "left-to-right isolate",
    0x2067: "right-to-left isolate",
    0x2068: "first strong isolate",
    0x2069: "pop directional isolate",
}
"""The bidirectional controls (UAX #9), named: the ones that make text read otherwise."""
_USED_BY_TEXT = frozenset("\t\n\r\u200c\u200d")
_ASCII_HIDDEN = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")


def is_hidden(char: str) -> bool:
    """Whether ``char`` is a control or format character a reader would not see as itself."""
    return char not in _USED_BY_TEXT and unicodedata.category(char) in ("Cc", "Cf")


def marker(char: str) -> str:
    """The visible stand-in for a hidden character: its code point, and its name when it is a
    bidirectional control."""
    code = ord(char)
    name = _BIDI.get(code)
    return f"⟨U+{code:04X} {name}⟩" if name else f"⟨U+{code:04X}⟩"


def shown(text: str) -> str:
    """``text`` with every hidden character replaced by its :func:`marker`; ``text`` itself
    (the same object) when it has none."""
    if text.isascii():
        if _ASCII_HIDDEN.search(text) is None:
            return text
    elif not any(is_hidden(char) for char in text):
        return text
    return "".join(marker(char) if is_hidden(char) else char for char in text)
