"""Grounding a relative date ("yesterday", "last Saturday", "three years ago") in event time.

The anchor is the episode's ``occurred_at`` date, never the wall clock, so a replay grounds
the same words to the same date. The value is as precise as the words: a day ("2023-05-06"),
an ISO week ("2023-W18"), a month ("2023-04") or a year ("2020"; "last summer" is the year
of the last summer that has ended). Anything vaguer ("a while
ago", "recently") grounds to nothing, and the event forms without a date.
"""

from __future__ import annotations

import re
from datetime import date, timedelta

_WEEKDAYS = {
    "mon": 0, "tue": 1, "wed": 2, "thu": 3, "fri": 4, "sat": 5, "sun": 6,
}  # fmt: skip
_NUMBERS = {
    "a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6,
    "seven": 7, "eight": 8, "nine": 9, "ten": 10, "couple of": 2,
}  # fmt: skip
_RELATIVE = re.compile(
    r"\b(?:(?P<yesterday>yesterday|last night)|last\s+(?P<season>spring|summer|fall|autumn|winter)|(?P<today>today|this morning|this afternoon|tonight)"
    r"|last\s+(?P<weekday>mon|tue|wed|thu|fri|sat|sun)(?:day|s|sday|nesday|rs|rsday|urday)?\.?"
    r"|last\s+(?P<unit>week|weekend|month|year)"
    r"|(?P<count>\d+|a|an|one|two|three|four|five|six|seven|eight|nine|ten|couple of)\s+"
    r"(?P<ago_unit>day|week|month|year)s?\s+ago)\b",
    re.IGNORECASE,
)


def ground(text: str, anchor: date | None) -> str | None:
    """The date ``text`` names relative to ``anchor``, at the precision of its words."""
    if anchor is None:
        return None
    match = _RELATIVE.search(text)
    if match is None:
        return None
    if match.group("yesterday"):
        return (anchor - timedelta(days=1)).isoformat()
    if match.group("season"):
        return str(_season_year(anchor, match.group("season").lower()))
    if match.group("today"):
        return anchor.isoformat()
    if match.group("weekday"):
        back = (anchor.weekday() - _WEEKDAYS[match.group("weekday").lower()]) % 7 or 7
        return (anchor - timedelta(days=back)).isoformat()
    if match.group("unit"):
        return _unit_back(anchor, match.group("unit").lower(), 1)
    count = match.group("count").lower()
    number = int(count) if count.isdigit() else _NUMBERS[count]
    return _unit_back(anchor, match.group("ago_unit").lower(), number)


def _unit_back(anchor: date, unit: str, number: int) -> str:
    """``number`` units before ``anchor`` (after it when negative), at the unit's precision."""
    if unit == "day":
        return (anchor - timedelta(days=number)).isoformat()
    if unit in {"week", "weekend"}:
        year, week, _ = (anchor - timedelta(weeks=number)).isocalendar()
        return f"{year}-W{week:02d}"
    if unit == "month":
        months = anchor.year * 12 + anchor.month - 1 - number
        return f"{months // 12}-{months % 12 + 1:02d}"
    return str(anchor.year - number)


_AHEAD = re.compile(
    r"\b(?:(?P<tomorrow>tomorrow)"
    r"|next\s+(?P<weekday>mon|tue|wed|thu|fri|sat|sun)(?:day|s|sday|nesday|rs|rsday|urday)?\.?"
    r"|next\s+(?P<unit>week|weekend|month|year)"
    r"|in\s+(?P<count>\d+|a|an|one|two|three|four|five|six|seven|eight|nine|ten|couple of)\s+"
    r"(?P<in_unit>day|week|month|year)s?)\b",
    re.IGNORECASE,
)


def before_ahead(text: str) -> str:
    """``text`` cut before a phrase of time ahead: "a ceramics workshop in two weeks" names a
    ceramics workshop."""
    match = _AHEAD.search(text)
    return text[: match.start()].rstrip() if match else text


def ground_ahead(text: str, anchor: date | None) -> str | None:
    """The future date ``text`` names relative to ``anchor`` ("next Saturday", "tomorrow",
    "in two weeks"), at the precision of its words: the date of a plan, as :func:`ground` is
    the date of a past event. "next Saturday" is the first Saturday after ``anchor``."""
    if anchor is None:
        return None
    match = _AHEAD.search(text)
    if match is None:
        return None
    if match.group("tomorrow"):
        return (anchor + timedelta(days=1)).isoformat()
    if match.group("weekday"):
        ahead = (_WEEKDAYS[match.group("weekday").lower()] - anchor.weekday()) % 7 or 7
        return (anchor + timedelta(days=ahead)).isoformat()
    if match.group("unit"):
        return _unit_back(anchor, match.group("unit").lower(), -1)
    count = match.group("count").lower()
    number = int(count) if count.isdigit() else _NUMBERS[count]
    return _unit_back(anchor, match.group("in_unit").lower(), -number)


_SEASON_ENDS = {"spring": 6, "summer": 9, "fall": 12, "autumn": 12, "winter": 3}


def _season_year(anchor: date, season: str) -> int:
    """The year of the last whole such season before ``anchor`` (winter by its January)."""
    return anchor.year if anchor.month >= _SEASON_ENDS[season] else anchor.year - 1
