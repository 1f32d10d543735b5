"""A Portuguese or Spanish question's dates are read as the English ones (sentences of our own)."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from engram.projections.reads.time_words import english_time, rewrite_time
from engram.projections.reads.when import Period, periods

ASKED = datetime(2024, 6, 10, 12, 0, tzinfo=UTC)


def day(year: int, month: int, number: int) -> datetime:
    return datetime(year, month, number, tzinfo=UTC)


@pytest.mark.parametrize(
    ("question", "period"),
    [
        ("O que eu comprei em 3 de março de 2024?", Period(day(2024, 3, 3), day(2024, 3, 4))),
        ("¿Qué compré el 3 de marzo de 2024?", Period(day(2024, 3, 3), day(2024, 3, 4))),
        ("Aonde fomos em setembro de 2023?", Period(day(2023, 9, 1), day(2023, 10, 1))),
        ("¿Adónde fuimos en septiembre de 2023?", Period(day(2023, 9, 1), day(2023, 10, 1))),
        ("O que plantei na semana passada?", Period(day(2024, 6, 3), day(2024, 6, 10))),
        ("¿Qué planté la semana pasada?", Period(day(2024, 6, 3), day(2024, 6, 10))),
        ("Com quem jantei ontem?", Period(day(2024, 6, 9), day(2024, 6, 10))),
        ("¿Con quién cené ayer?", Period(day(2024, 6, 9), day(2024, 6, 10))),
    ],
)
def test_a_date_in_portuguese_or_spanish_is_a_period(question: str, period: Period) -> None:
    timed = periods(english_time(question), ASKED)
    assert timed.periods == (period,)


def test_the_words_left_are_the_questions_own() -> None:
    timed = periods(english_time("O que eu comprei em 3 de março de 2024?"), ASKED)
    assert timed.words == "O que eu comprei ?"


def test_counts_in_words_and_digits_are_read() -> None:
    assert rewrite_time("O que fiz há duas semanas?") == "O que fiz 2 weeks ago ?"
    assert rewrite_time("¿Qué hice hace 3 meses?") == "¿Qué hice 3 months ago ?"
    assert rewrite_time("O que li dois anos atrás?") == "O que li 2 years ago ?"


def test_the_weekend_is_not_a_week() -> None:
    assert rewrite_time("O que comprei no fim de semana passado?") == "O que comprei last weekend ?"
    assert rewrite_time("¿Qué compré el fin de semana pasado?") == "¿Qué compré last weekend ?"


def test_words_that_only_look_like_time_are_left() -> None:
    # "hace" is also "does", "18 anos" an age, "de" everywhere
    for question in ("¿Qué hace Jon los sábados?", "Quando foi o aniversário de 18 anos da Ana?"):
        assert rewrite_time(question) == question


def test_an_english_question_is_read_as_before() -> None:
    question = "Did I see Mayo in Enero, the bar, on 3 de marzo?"
    assert english_time(question) == question
