"""Time in a question: the periods it names, resolved against the moment it is asked.

"What did I do in May 2023?", "on 3 June, 2023", "the week before August 3, 2023", "last May",
"last year", "two weeks ago", "yesterday": :func:`periods` returns each as a half-open
interval ``[start, end)`` and the question with those words taken out (:attr:`Timed.words`).
Recall uses both (:mod:`engram.projections.reads.recall`): the periods to put the messages said in
them first, the rest of the words to match by — a year or a month name is not a content word:
no message holds "2023", so BM25 would weigh it as the rarest word of the question and every
belief dated that year would come first (measured on held-out questions: 44 of 48 questions
holding a year put dated beliefs first).

Relative phrases are resolved against ``as_of`` (the question's own time; the caller's clock
when it gives none): "last May" is the latest May that has ended before the month of
``as_of``, "in May" without a year the latest May that has begun by then. Pure: no clock is
read here, and the same text and ``as_of`` always give the same periods. Times are in
``as_of``'s time zone (UTC for a naive one). What it does not read: a period relative to an
event ("two weeks before the wedding": the wedding's date is in memory, not in the question),
seasons, ranges ("between May and July"), and other languages' month names.
"""

from __future__ import annotations

import calendar
import re
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

_MONTHS = {name.lower(): number for number, name in enumerate(calendar.month_name) if name}
_MONTHS.update({name.lower(): number for number, name in enumerate(calendar.month_abbr) if name})
_MONTHS["sept"] = 9
_MONTH = r"(?P<month>" + "|".join(sorted(_MONTHS, key=len, reverse=True)) + r")\.?"
_YEAR = r"(?P<year>(?:19|20)\d\d)"
_DAY = r"(?P<day>[0-3]?\d)(?:st|nd|rd|th)?"
_NUMBERS = {
    "a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6,
    "seven": 7, "eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12,
}  # fmt: skip
_COUNT = r"(?P<count>\d{1,3}|" + "|".join(_NUMBERS) + r")"
_UNIT = r"(?P<unit>day|week|month|year)s?"
_SHIFT = (
    r"(?:\b(?:in|on|during|of)\s+)?"
    r"(?:(?:the\s+)?(?P<span>day|week|month)\s+(?P<side>before|after)\s+)?"
)

_ORDINALS = {
    "first": 1,
    "1st": 1,
    "second": 2,
    "2nd": 2,
    "third": 3,
    "3rd": 3,
    "fourth": 4,
    "4th": 4,
}
_NTH = r"(?P<nth>" + "|".join(_ORDINALS) + r"|last)"

_PATTERNS = [
    # the first week of March 2024 / the last week of May (one period: that week of that month)
    re.compile(
        r"\b(?:(?:in|on|during)\s+)?(?:the\s+)?"
        + _NTH
        + r"\s+week\s+of\s+"
        + _MONTH
        + r"(?:,?\s+(?:of\s+)?"
        + _YEAR
        + r")?\b",
        re.I,
    ),
    # 3 June, 2023 / 3rd of June 2023 / June 3, 2023 / June 3rd 2023 (a year, or the latest)
    re.compile(_SHIFT + _DAY + r"\s+(?:of\s+)?" + _MONTH + r",?\s*" + _YEAR + r"?\b", re.I),
    re.compile(_SHIFT + _MONTH + r"\s+" + _DAY + r"\b(?:,?\s*" + _YEAR + r")?", re.I),
    # May 2023 / May of 2023
    re.compile(_SHIFT + _MONTH + r",?\s+(?:of\s+)?" + _YEAR + r"\b", re.I),
    # last May / this May / in May
    re.compile(r"\b(?P<which>last|this|in|during)\s+" + _MONTH + r"\b", re.I),
    # in 2023 / during 2023 / the year 2023 / a question that is only "2023" (a bare number
    # elsewhere is a title's or a count's: "Blade Runner 2049")
    re.compile(r"\b(?:in|during|of|year)\s+" + _YEAR + r"\b", re.I),
    re.compile(r"^\W*" + _YEAR + r"\W*$", re.I),
    # last week / this month / last year / last weekend
    re.compile(r"\b(?P<rel>last|this|past)\s+(?P<unit>weekend|week|month|year)\b", re.I),
    # two weeks ago
    re.compile(r"\b" + _COUNT + r"\s+" + _UNIT + r"\s+ago\b", re.I),
    re.compile(r"\b(?P<single>yesterday|today)\b", re.I),
]


@dataclass(frozen=True, slots=True)
class Period:
    """``[start, end)``."""

    start: datetime
    end: datetime

    def holds(self, moment: datetime) -> bool:
        return self.start <= moment < self.end


@dataclass(frozen=True, slots=True)
class Timed:
    """A question's periods, and its words with the ones that named them taken out."""

    periods: tuple[Period, ...]
    words: str


def periods(question: str, as_of: datetime) -> Timed:
    """The periods ``question`` names (see the module's docstring), in the order it names
    them, and the question without their words."""
    now = as_of if as_of.tzinfo else as_of.replace(tzinfo=UTC)
    found: list[tuple[int, Period]] = []
    text = question
    for pattern in _PATTERNS:
        kept: list[str] = []
        at = 0
        for match in pattern.finditer(text):
            period = None if _in_a_name(text, match) else _resolvable(match, now)
            if period is None:
                continue
            found.append((match.start(), period))
            kept.append(text[at : match.start()] + " " * len(match[0]))
            at = match.end()
        text = "".join(kept) + text[at:]
    found.sort(key=lambda pair: pair[0])
    return Timed(tuple(p for _, p in found), " ".join(text.split()))


_CAPITALISED = re.compile(r"[A-Z][\w'-]*")
_WORD_BEFORE = re.compile(r"([\w'-]+)\W*$")


def _in_a_name(text: str, match: re.Match[str]) -> bool:
    """Whether the date ``match`` found is part of a name rather than a time: followed by a
    capitalised word ("the Jan 3 Band"; "I" is not a name), or, when no preposition introduces
    it, preceded by one that does not begin the sentence ("Club May 3"; a sentence's first word
    is capitalised anyway)."""
    after = text[match.end() :].lstrip(" ,")
    following = _CAPITALISED.match(after)
    if following and following[0] != "I" and not text[match.end() :].startswith((", ", ",")):
        return True
    if match[0][:1].islower():  # "on June 3": introduced by a preposition, a time
        return False
    before = text[: match.start()]
    previous = _WORD_BEFORE.search(before)
    if previous is None or not previous[1][:1].isupper() or previous[1] == "I":
        return False
    head = before[: previous.start()].rstrip()
    return bool(head) and not head.endswith((".", "?", "!", ":", ";"))


def _resolvable(match: re.Match[str], now: datetime) -> Period | None:
    """The period ``match`` names, or None when the calendar cannot hold it ("last week" asked
    as of 1 January of year 1): a time that does not exist is words, never an error."""
    try:
        return _resolve(match, now)
    except (OverflowError, ValueError):
        return None


def _resolve(match: re.Match[str], now: datetime) -> Period | None:
    parts = match.groupdict()
    if parts.get("nth"):
        return _week_of(parts, now)
    if parts.get("single"):
        day = _midnight(now) - timedelta(days=1 if parts["single"].lower() == "yesterday" else 0)
        return Period(day, day + timedelta(days=1))
    if parts.get("count"):
        return _ago(parts["count"].lower(), parts["unit"].lower(), now)
    if parts.get("rel"):
        return _relative(parts["rel"].lower(), parts["unit"].lower(), now)
    month = _MONTHS.get((parts.get("month") or "").lower())
    year = int(parts["year"]) if parts.get("year") else None
    if parts.get("day") and month:
        return _day(int(parts["day"]), month, year, now, parts)
    if month:
        if year is None:
            year = _latest_year(month, now, ended=(parts.get("which") or "").lower() == "last")
        return _shifted(_month(year, month, now), parts)
    if year is not None:
        return Period(_at(now, year, 1, 1), _at(now, year + 1, 1, 1))
    return None


def _week_of(parts: dict[str, str], now: datetime) -> Period:
    """ "The first week of March 2024": days 1-7 of that month (the second 8-14, ...); "the
    last week of" its last seven days. Without a year, the latest such month that has begun."""
    month = _MONTHS[parts["month"].lower()]
    year = int(parts["year"]) if parts.get("year") else _latest_year(month, now, ended=False)
    whole = _month(year, month, now)
    nth = parts["nth"].lower()
    if nth == "last":
        return Period(whole.end - timedelta(days=7), whole.end)
    start = whole.start + timedelta(days=7 * (_ORDINALS[nth] - 1))
    return Period(start, start + timedelta(days=7))


def _day(
    day: int, month: int, year: int | None, now: datetime, parts: dict[str, str]
) -> Period | None:
    if year is None:
        year = now.year if (month, day) <= (now.month, now.day) else now.year - 1
    if not 1 <= day <= calendar.monthrange(year, month)[1]:
        return None
    start = _at(now, year, month, day)
    return _shifted(Period(start, start + timedelta(days=1)), parts)


def _shifted(period: Period, parts: dict[str, str]) -> Period:
    """``the week before`` / ``the day after`` a date: the span next to it."""
    span, side = (parts.get("span") or "").lower(), (parts.get("side") or "").lower()
    if not span:
        return period
    length = {"day": timedelta(days=1), "week": timedelta(days=7), "month": timedelta(days=31)}
    if side == "before":
        return Period(period.start - length[span], period.start)
    return Period(period.end, period.end + length[span])


def _latest_year(month: int, now: datetime, *, ended: bool) -> int:
    """The year of the latest ``month`` that has begun by ``now`` (``ended``: that has ended
    before ``now``'s month, so "last May" asked in May is a year ago)."""
    if month < now.month or (month == now.month and not ended):
        return now.year
    return now.year - 1


def _month(year: int, month: int, now: datetime) -> Period:
    start = _at(now, year, month, 1)
    following = _at(now, year + 1, 1, 1) if month == 12 else _at(now, year, month + 1, 1)
    return Period(start, following)


def _relative(which: str, unit: str, now: datetime) -> Period:
    today = _midnight(now)
    if unit in ("week", "weekend"):
        monday = today - timedelta(days=today.weekday())
        start = monday - timedelta(days=7) if which in ("last", "past") else monday
        if unit == "weekend":
            return Period(start + timedelta(days=5), start + timedelta(days=7))
        return Period(start, start + timedelta(days=7))
    if unit == "month":
        year, month = now.year, now.month
        if which in ("last", "past"):
            year, month = (year - 1, 12) if month == 1 else (year, month - 1)
        return _month(year, month, now)
    year = now.year - 1 if which in ("last", "past") else now.year
    return Period(_at(now, year, 1, 1), _at(now, year + 1, 1, 1))


def _ago(count: str, unit: str, now: datetime) -> Period | None:
    n = _NUMBERS.get(count) or int(count)
    today = _midnight(now)
    if unit == "day":
        day = today - timedelta(days=n)
        return Period(day, day + timedelta(days=1))
    if unit == "week":
        return Period(today - timedelta(days=7 * n + 3), today - timedelta(days=7 * n - 4))
    if unit == "month":
        year, month = now.year, now.month - n
        while month < 1:
            year, month = year - 1, month + 12
        return _month(year, month, now) if year >= 1 else None
    return Period(_at(now, now.year - n, 1, 1), _at(now, now.year - n + 1, 1, 1))


def _midnight(now: datetime) -> datetime:
    return now.replace(hour=0, minute=0, second=0, microsecond=0)


def _at(now: datetime, year: int, month: int, day: int) -> datetime:
    return datetime(year, month, day, tzinfo=now.tzinfo)
