"""The pure part of recall's lexical list: BM25's idf, the order terms are read in, and how many
fit the budget of postings one question may read."""

from __future__ import annotations

import math

import pytest

from engram.projections.messages.lexical import Statistics, Term, idf, rarest_first, within_budget


def test_idf_weighs_a_rare_term_above_a_common_one_and_never_zero() -> None:
    assert idf(100_000, 37) > idf(100_000, 9_240) > idf(100_000, 100_000) > 0
    assert idf(10, 2) == pytest.approx(math.log(1 + 8.5 / 2.5))


def test_a_term_no_message_holds_is_the_rarest() -> None:
    terms = [Term("go", 9_240), Term("status", 0), Term("sunris", 37)]
    assert [t.lexeme for t in rarest_first(terms, 100_000)] == ["status", "sunris", "go"]


def test_terms_of_equal_frequency_are_read_in_lexeme_order_whatever_order_they_came_in() -> None:
    terms = [Term("b", 5), Term("a", 5), Term("c", 1)]
    assert [t.lexeme for t in rarest_first(terms, 50)] == ["c", "a", "b"]
    assert rarest_first(list(reversed(terms)), 50) == rarest_first(terms, 50)


def test_the_budget_takes_the_rarest_terms_while_their_postings_fit() -> None:
    ordered = [Term("sunris", 37), Term("paint", 1_552), Term("melani", 2_109)]
    assert within_budget(ordered, budget=10_000) == 3
    assert within_budget(ordered, budget=1_589) == 2
    assert within_budget(ordered, budget=1_588) == 1


def test_the_rarest_term_is_read_even_past_the_budget() -> None:
    assert within_budget([Term("go", 9_240), Term("year", 9_999)], budget=100) == 1
    assert within_budget([], budget=100) == 0


def test_statistics_give_the_average_length_over_the_scope() -> None:
    stats = Statistics(terms=(Term("japan", 3),), messages=4, length=38)
    assert stats.average_length == pytest.approx(9.5)
    assert stats.idf == {"japan": pytest.approx(idf(4, 3))}
    assert Statistics(terms=(), messages=0, length=0).average_length == 1.0
