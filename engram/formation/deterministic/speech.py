"""Quoted and reported speech: words in a user's message that are not the user's assertion.

"The email said: 'I am your account manager, I work at Northbank'" is a user telling what an
email said; the first person inside it is the email's author, not the principal. Such regions
are found here by their shape, and the extractor proposes nothing from a clause that touches
one: a quotation (straight or curly quotes) that reads as speech, and everything after a
reporting colon ("it said:", "the message read:", "here's the text:") to the end of the
paragraph. A short quoted title ("a play called "Finding Home"") is not speech and is kept.
"""

from __future__ import annotations

import re

_ELISIONS = r"(?:cause|cos|coz|em|til|till|bout|round|n|tis|twas|s|\d+s?)\b"
_DOUBLE = re.compile(r"\"[^\"\n]*\"?|\u201c[^\u201d\n]*\u201d?")
_CURLY_SINGLE = re.compile(r"\u2018[^\u2019\n]*(?:\u2019(?!\w)|$)")
_STRAIGHT_SINGLE = re.compile(r"(?:(?<=^)|(?<=[\s:(]))'(?=\w)[^\n]*?(?:(?<=[\w.!?,])'(?!\w)|$)")
_ELIDED = re.compile(r"'" + _ELISIONS, re.IGNORECASE)
"""An unclosed straight quote that elides a word ("'cause", "'em", "'90s") opens no quotation;
a closed one is a quotation whatever its first word ("'til next time, I live in Lyon'")."""
_REPORTING_COLON = re.compile(
    r"\b(?:said|says|say|wrote|writes|read|reads|replied|replies|texted|messaged|emailed"
    r"|posted|asked|goes|went|told (?:me|us|him|her|them)"
    r"|(?:e-?mail|message|text|letter|note|post|tweet|dm|voicemail|sign|ad|review|caption)"
    r"(?:\s+\w+){0,3})\s*:",
    re.IGNORECASE,
)
_QUOTATIONS = (
    (_DOUBLE, ('"', "\u201c")),
    (_CURLY_SINGLE, ("\u2018",)),
    (_STRAIGHT_SINGLE, ("'",)),
)
"""Each quotation pattern with the marks one of which every match of it contains: a message
without them is not searched."""
_PARAGRAPH_END = re.compile(r"\n\s*\n")
_SPEECH_WORDS = re.compile(
    r"\b(?:I|I'm|I've|I'd|I'll|me|my|we|our|us|you|your|is|am|are|was|will)\b", re.IGNORECASE
)


def speech_regions(content: str) -> list[tuple[int, int]]:
    """Character ranges of ``content`` that report someone's words, in order."""
    regions: list[tuple[int, int]] = []
    for pattern, marks in _QUOTATIONS:
        if not any(mark in content for mark in marks):
            continue  # every match of the pattern contains one of its marks
        for match in pattern.finditer(content):
            if _elided(match.group()) or not _is_speech(match.group()):
                continue
            regions.append((match.start(), match.end()))
    if ":" not in content:  # a reporting colon ends in one
        return sorted(regions)
    for match in _REPORTING_COLON.finditer(content):
        end = _PARAGRAPH_END.search(content, match.end())
        regions.append((match.end(), end.start() if end else len(content)))
    return sorted(regions)


def touches_speech(regions: list[tuple[int, int]], start: int, end: int) -> bool:
    return any(r_start < end and start < r_end for r_start, r_end in regions)


def _elided(quoted: str) -> bool:
    closed = len(quoted) > 1 and quoted.endswith("'")
    return not closed and bool(_ELIDED.match(quoted))


def _is_speech(quoted: str) -> bool:
    inner = quoted.strip("\"'\u201c\u201d\u2018\u2019 ")
    return len(inner.split()) > 6 or bool(_SPEECH_WORDS.search(inner))
