"""A Portuguese or Spanish question's dates in English words, so that time is read in them too.

:mod:`engram.projections.reads.when` reads English: "in June 2023", "on 1 May 2022", "last
week", "two weeks ago". A question asked in Portuguese ("em junho de 2023", "há duas semanas")
or Spanish ("el 1 de mayo de 2022", "la semana pasada") names the same periods in words it does
not know, and its messages said then would not come first. :func:`english_time` rewrites those
phrases, and only those, into the English ones :func:`~engram.projections.reads.when.periods`
reads; the rest of the question is left as asked (its words are matched as they are and through
their English words, :mod:`engram.projections.messages.glossary`). Only a question whose
language (:func:`engram.projections.messages.language_of`) is Portuguese or Spanish is
rewritten, so an English question is read exactly as before.

Read: a day, month and year ("7 de fevereiro de 2022"), a day and month ("7 de fevereiro"), a
month and year ("junho de 2023"), a month after "em"/"en" ("em maio"), "semana / mês / ano /
fim de semana passado(a)" and "la semana / el mes / el año / el fin de semana pasado(a)",
"há / hace N dias / semanas / meses / anos" and "N ... atrás", "ontem"/"ayer", "hoje"/"hoy".
Pure: no clock, no I/O.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from engram.projections.messages import language_of, words_of

TRANSLATED = ("pt", "es")
"""The languages whose time words are read (ISO 639-1)."""

MONTHS = {
    # Portuguese
    "janeiro": "January", "fevereiro": "February", "março": "March", "marco": "March",
    "abril": "April", "maio": "May", "junho": "June", "julho": "July", "agosto": "August",
    "setembro": "September", "outubro": "October", "novembro": "November",
    "dezembro": "December",
    # Spanish (abril and agosto are the same words)
    "enero": "January", "febrero": "February", "marzo": "March", "mayo": "May",
    "junio": "June", "julio": "July", "septiembre": "September", "setiembre": "September",
    "octubre": "October", "noviembre": "November", "diciembre": "December",
}  # fmt: skip
NUMBERS = {
    "um": 1, "uma": 1, "un": 1, "una": 1, "uno": 1, "dois": 2, "duas": 2, "dos": 2,
    "três": 3, "tres": 3, "quatro": 4, "cuatro": 4, "cinco": 5, "seis": 6, "sete": 7,
    "siete": 7, "oito": 8, "ocho": 8, "nove": 9, "nueve": 9, "dez": 10, "diez": 10,
}  # fmt: skip
UNITS = {
    "dia": "day", "dias": "days", "día": "day", "días": "days",
    "semana": "week", "semanas": "weeks", "mês": "month", "mes": "month", "meses": "months",
    "ano": "year", "anos": "years", "año": "year", "años": "years",
}  # fmt: skip
_SPANS = {"semana": "week", "mês": "month", "mes": "month", "ano": "year", "año": "year"}

_MONTH = r"(?P<month>" + "|".join(sorted(MONTHS, key=len, reverse=True)) + r")"
_DAY = r"(?P<day>[0-3]?\d)(?:º|°)?"
_YEAR = r"(?P<year>(?:19|20)\d\d)"
_COUNT = r"(?P<count>\d{1,3}|" + "|".join(sorted(NUMBERS, key=len, reverse=True)) + r")"
_UNIT = r"(?P<unit>" + "|".join(sorted(UNITS, key=len, reverse=True)) + r")"
_AT = r"(?:\b(?:em|en|no|na|el|dia|día)\s+)*"


def _month(match: re.Match[str]) -> str:
    return MONTHS[match["month"].casefold()]


def _count(match: re.Match[str]) -> str:
    count = match["count"].casefold()
    return str(NUMBERS.get(count, count))


def _unit(match: re.Match[str]) -> str:
    return UNITS[match["unit"].casefold()]


_REWRITES: list[tuple[re.Pattern[str], Callable[[re.Match[str]], str]]] = [
    # 7 de fevereiro de 2022 / el 1 de mayo de 2022 / 7 de fevereiro
    (
        re.compile(
            _AT + _DAY + r"\s+de\s+" + _MONTH + r"(?:,?\s+(?:de|del)\s+" + _YEAR + r")?\b", re.I
        ),
        lambda m: f" on {m['day']} {_month(m)}" + (f" {m['year']}" if m["year"] else "") + " ",
    ),
    # junho de 2023 / em junho de 2023
    (
        re.compile(_AT + _MONTH + r",?\s+(?:de|del)\s+" + _YEAR + r"\b", re.I),
        lambda m: f" in {_month(m)} {m['year']} ",
    ),
    # em maio / en mayo
    (re.compile(r"\b(?:em|en)\s+" + _MONTH + r"\b", re.I), lambda m: f" in {_month(m)} "),
    # o fim de semana passado / el fin de semana pasado (before "semana passada")
    (
        re.compile(r"\b(?:(?:n?o|el)\s+)?fi[nm]\s+de\s+semana\s+(?:passado|pasado)\b", re.I),
        lambda _: " last weekend ",
    ),
    # a semana passada / el mes pasado
    (
        re.compile(
            r"\b(?:(?:n?[oa]|el|la)\s+)?(?P<span>semana|mês|mes|ano|año)\s+(?:passad[oa]|pasad[oa])\b",
            re.I,
        ),
        lambda m: f" last {_SPANS[m['span'].casefold()]} ",
    ),
    # há duas semanas / hace 3 meses / duas semanas atrás
    (
        re.compile(r"\b(?:há|ha|hace)\s+" + _COUNT + r"\s+" + _UNIT + r"(?:\s+atrás)?\b", re.I),
        lambda m: f" {_count(m)} {_unit(m)} ago ",
    ),
    (
        re.compile(r"\b" + _COUNT + r"\s+" + _UNIT + r"\s+atrás\b", re.I),
        lambda m: f" {_count(m)} {_unit(m)} ago ",
    ),
    (re.compile(r"\b(?:ontem|ayer)\b", re.I), lambda _: " yesterday "),
    (re.compile(r"\b(?:hoje|hoy)\b", re.I), lambda _: " today "),
]


def rewrite_time(text: str) -> str:
    """``text`` with its Portuguese and Spanish time phrases in English words (see the module's
    docstring), whatever its language."""
    for pattern, english in _REWRITES:
        text = pattern.sub(english, text)
    return " ".join(text.split())


def english_time(question: str) -> str:
    """``question`` with its time phrases in English when it is asked in Portuguese or Spanish
    (:data:`TRANSLATED`); an English question (or any other) as it is. The first call loads the
    word lists the language is read from (call it off the event loop)."""
    if language_of(words_of(question)) not in TRANSLATED:
        return question
    return rewrite_time(question)
