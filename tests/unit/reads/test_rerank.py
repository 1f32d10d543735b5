"""Recall's second stage without I/O: what a question asks for, what a message says, and the
order the linear model gives the first candidates."""

from __future__ import annotations

import math

import pytest

from engram.projections.reads.rerank import (
    FEATURES,
    TOP,
    WEIGHTS,
    Asks,
    asks_for,
    features,
    is_question,
    names_place,
    rerank,
    says_number,
    says_time,
)


@pytest.mark.parametrize(
    ("question", "asks"),
    [
        ("When did you move to the coast?", Asks.TIME),
        ("what year did the band split?", Asks.TIME),
        ("Which month was the fair held in?", Asks.TIME),
        ("How many dogs does Rui have?", Asks.NUMBER),
        ("How long has she been knitting?", Asks.NUMBER),
        ("Where did we camp in the summer?", Asks.PLACE),
        ("What city was the wedding in?", Asks.PLACE),
        ("What did Ana cook for the party?", Asks.OTHER),
        ("Who told you when to leave?", Asks.OTHER),
    ],
)
def test_a_question_asks_for_what_its_first_words_say(question: str, asks: Asks) -> None:
    assert asks_for(question) is asks


@pytest.mark.parametrize(
    "text",
    [
        "We went kayaking yesterday.",
        "I started pottery last month!",
        "It was on Saturday, a lovely day.",
        "Back in 2019 I lived there.",
        "The fair is on June 3rd.",
        "She arrived two weeks ago.",
    ],
)
def test_a_message_that_says_a_time(text: str) -> None:
    assert says_time(text)


@pytest.mark.parametrize("text", ["I love kayaking.", "The sunset was golden.", "Maybe soon."])
def test_a_message_that_says_no_time(text: str) -> None:
    assert not says_time(text)


def test_numbers_places_and_questions_are_read_from_the_words() -> None:
    assert says_number("We adopted three cats.") and says_number("It cost 40 euros.")
    assert not says_number("We adopted a cat.")
    assert names_place("We stayed in Porto for a week.") and names_place("I flew to Lima.")
    assert not names_place("We stayed in a hut.") and not names_place("Porto is lovely.")
    assert is_question("How was it?") and is_question('He asked "why?" ')
    assert not is_question("It was fine.")


def test_features_are_named_and_weighted_one_for_one() -> None:
    values = features("We went kayaking yesterday.", 2, Asks.TIME)
    assert len(values) == len(FEATURES) == len(WEIGHTS)
    named = dict(zip(FEATURES, values, strict=True))
    assert named["first_stage"] == -math.log(2)
    assert named["time_for_when"] == 1.0
    assert named["question"] == 0.0
    assert dict(zip(FEATURES, features("When?", 1, Asks.OTHER), strict=True))["question"] == 1.0


def test_the_answers_type_lifts_a_message_that_says_a_time_for_a_when_question() -> None:
    contents = {"a": "I love kayaking on the river.", "b": "We went kayaking yesterday."}
    assert rerank(["a", "b"], contents, Asks.TIME) == ["b", "a"]
    assert rerank(["a", "b"], contents, Asks.OTHER) == ["a", "b"]


def test_a_message_that_asks_falls_below_one_that_tells() -> None:
    contents = {"a": "Did you go kayaking?", "b": "I go kayaking on Sundays."}
    only_asking = tuple(
        w if name == "question" else 0.0 for name, w in zip(FEATURES, WEIGHTS, strict=True)
    )
    assert WEIGHTS[FEATURES.index("question")] < 0
    assert rerank(["a", "b"], contents, Asks.OTHER, weights=only_asking) == ["b", "a"]


def test_a_time_lifts_a_message_about_four_places_and_no_further() -> None:
    names = [f"m{i}" for i in range(1, 9)]
    contents = {n: "The river trip." for n in names}
    contents["m4"] = contents["m8"] = "The river trip, last Saturday."
    assert rerank(names, contents, Asks.TIME)[:2] == ["m4", "m1"]
    assert rerank(names, contents, Asks.TIME).index("m8") > rerank(
        names, contents, Asks.TIME
    ).index("m1")


def test_ties_keep_the_first_stages_order_and_the_rest_follow_untouched() -> None:
    names = [f"m{i}" for i in range(TOP + 5)]
    contents = {n: "Same words." for n in names}
    zero = tuple(0.0 for _ in FEATURES)
    assert rerank(names, contents, Asks.OTHER, weights=zero) == names
    assert rerank(names, contents, Asks.OTHER) == names
    tail_first = {**contents, names[-1]: "When? Yesterday!"}
    assert rerank(names, tail_first, Asks.TIME) == names, "past TOP nothing is read"
    assert rerank([], {}, Asks.OTHER) == []
