"""Time in a question: the periods it names, resolved against when it is asked, and the words
left to match by (a year or a month's name is not a content word)."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from engram.projections.reads.when import Period, periods

ASKED = datetime(2024, 5, 20, 15, 30, tzinfo=UTC)


def day(year: int, month: int, d: int) -> datetime:
    return datetime(year, month, d, tzinfo=UTC)


@pytest.mark.parametrize(
    ("question", "period", "words"),
    [
        ("What did I do in 2022?", Period(day(2022, 1, 1), day(2023, 1, 1)), "What did I do ?"),
        (
            "What did I host in May 2023?",
            Period(day(2023, 5, 1), day(2023, 6, 1)),
            "What did I host ?",
        ),
        (
            "Who called on 3 June, 2023?",
            Period(day(2023, 6, 3), day(2023, 6, 4)),
            "Who called ?",
        ),
        (
            "Who called on June 3rd, 2023?",
            Period(day(2023, 6, 3), day(2023, 6, 4)),
            "Who called ?",
        ),
        (
            "What did I do the week before August 3, 2023?",
            Period(day(2023, 7, 27), day(2023, 8, 3)),
            "What did I do ?",
        ),
        (
            "What did I cook last May?",
            Period(day(2023, 5, 1), day(2023, 6, 1)),
            "What did I cook ?",
        ),
        (
            "What did I cook in March?",
            Period(day(2024, 3, 1), day(2024, 4, 1)),
            "What did I cook ?",
        ),
        (
            "What did I cook in August?",
            Period(day(2023, 8, 1), day(2023, 9, 1)),
            "What did I cook ?",
        ),
        ("Where did I go last year?", Period(day(2023, 1, 1), day(2024, 1, 1)), "Where did I go ?"),
        ("Where was I last week?", Period(day(2024, 5, 13), day(2024, 5, 20)), "Where was I ?"),
        (
            "What did I buy yesterday?",
            Period(day(2024, 5, 19), day(2024, 5, 20)),
            "What did I buy ?",
        ),
        (
            "What did I buy two days ago?",
            Period(day(2024, 5, 18), day(2024, 5, 19)),
            "What did I buy ?",
        ),
        (
            "What happened 3 months ago?",
            Period(day(2024, 2, 1), day(2024, 3, 1)),
            "What happened ?",
        ),
    ],
)
def test_a_named_period_is_resolved_and_its_words_leave_the_question(
    question: str, period: Period, words: str
) -> None:
    timed = periods(question, ASKED)
    assert timed.periods == (period,)
    assert timed.words == words


def test_last_may_asked_in_may_is_a_year_ago_and_this_may_is_now() -> None:
    assert periods("last May", ASKED).periods == (Period(day(2023, 5, 1), day(2023, 6, 1)),)
    assert periods("this May", ASKED).periods == (Period(day(2024, 5, 1), day(2024, 6, 1)),)


def test_words_that_only_look_like_time_stay_words() -> None:
    for question in ("May I ask where my keys are?", "Did we march together?", "I have 12 cats"):
        timed = periods(question, ASKED)
        assert timed.periods == ()
        assert timed.words == question


def test_two_periods_come_in_the_order_the_question_names_them() -> None:
    timed = periods("Did I move in 2021 or in March 2022?", ASKED)
    assert timed.periods == (
        Period(day(2021, 1, 1), day(2022, 1, 1)),
        Period(day(2022, 3, 1), day(2022, 4, 1)),
    )


def test_an_impossible_day_falls_back_to_its_month() -> None:
    assert periods("on 31 February 2023", ASKED).periods == (
        Period(day(2023, 2, 1), day(2023, 3, 1)),
    )


def test_the_first_week_of_a_month_is_one_period() -> None:
    timed = periods("What did I plant the first week of March 2024?", ASKED)
    assert timed.periods == (Period(day(2024, 3, 1), day(2024, 3, 8)),)
    assert timed.words == "What did I plant ?"
    assert periods("in the last week of February 2024", ASKED).periods == (
        Period(day(2024, 2, 23), day(2024, 3, 1)),
    )
    assert periods("the second week of May", ASKED).periods == (
        Period(day(2024, 5, 8), day(2024, 5, 15)),
    )


def test_a_number_is_a_year_only_where_it_reads_as_one() -> None:
    for question in ("Did I like Blade Runner 2049?", "What about the 2049 tickets?"):
        timed = periods(question, ASKED)
        assert timed.periods == ()
        assert timed.words == question
    assert periods("What did I do in 2022?", ASKED).periods == (
        Period(day(2022, 1, 1), day(2023, 1, 1)),
    )
    assert periods("2022", ASKED).periods == (Period(day(2022, 1, 1), day(2023, 1, 1)),)


def test_a_date_inside_a_name_is_not_a_period() -> None:
    for question in ("Who plays in the Jan 3 Band?", "Was I at Club May 3 then?"):
        timed = periods(question, ASKED)
        assert timed.periods == ()
        assert timed.words == question
    assert periods("Did I visit Porto on June 3?", ASKED).periods == (
        Period(day(2023, 6, 3), day(2023, 6, 4)),
    )
    assert periods("On June 3, I ran.", ASKED).periods == (
        Period(day(2023, 6, 3), day(2023, 6, 4)),
    )


def test_relative_time_is_read_from_the_questions_own_date() -> None:
    asked = datetime(2023, 3, 15, tzinfo=UTC)
    assert periods("What did I cook last week?", asked).periods == (
        Period(day(2023, 3, 6), day(2023, 3, 13)),
    )
    assert periods("two months ago", asked).periods == (Period(day(2023, 1, 1), day(2023, 2, 1)),)


@pytest.mark.parametrize(
    ("question", "as_of"),
    [
        ("what did I do last week", datetime(1, 1, 1, tzinfo=UTC)),
        ("what happened yesterday", datetime(1, 1, 1, tzinfo=UTC)),
        ("what did I do two months ago", datetime(1, 1, 15, tzinfo=UTC)),
        ("what will I do next year", datetime(9999, 12, 31, 23, 59, tzinfo=UTC)),
        ("the last week of December", datetime(9999, 12, 31, 23, 59, tzinfo=UTC)),
    ],
)
def test_a_time_the_calendar_cannot_hold_is_words_not_an_error(
    question: str, as_of: datetime
) -> None:
    timed = periods(question, as_of)
    assert all(p.start < p.end for p in timed.periods)
