"""Habits and routines (issue 27, item 5): how often and since when, as a facet of one belief.

Every sentence is written for this file.
"""

from __future__ import annotations

import pytest

from engram.formation.deterministic.habits import pastime
from tests.unit.formation.formed import batch


def _routines(content: str) -> list[tuple[str, str | None]]:
    return [
        (c.object.text, c.facet)
        for c in batch(content).candidates
        if c.relation == "participated_in"
    ]


@pytest.mark.parametrize(
    ("content", "routine"),
    [
        ("Every weekend I go climbing with my cousin.", ("climbing", "every weekend")),
        ("Most mornings I swim before work.", ("swimming", "most mornings")),
        ("I go hiking every Sunday.", ("hiking", "every sunday")),
        ("I bake every weekend.", ("baking", "every weekend")),
        ("I do yoga every morning.", ("yoga", "every morning")),
        ("I play tennis twice a week.", ("tennis", "twice a week")),
        ("On weekends I usually go fishing with my dad.", ("fishing", "on weekends")),
        ("I usually run in the mornings.", ("running", None)),
    ],
)
def test_a_routine_is_one_belief_carrying_how_often(
    content: str, routine: tuple[str, str | None]
) -> None:
    assert _routines(content) == [routine]


@pytest.mark.parametrize(
    ("content", "routine"),
    [
        ("I've been knitting for three years.", ("knitting", "since 2021")),
        ("I've been running for about two years now.", ("running", "since 2022")),
        ("I've been sketching for six months.", ("sketching", "since 2023-11")),
    ],
)
def test_a_pastime_told_with_its_duration_carries_since_when(
    content: str, routine: tuple[str, str | None]
) -> None:
    assert _routines(content) == [routine]


@pytest.mark.parametrize(
    "content",
    [
        "I used to swim every morning.",
        "I'd love to swim every morning.",
        "I go to work every day.",
        "I usually wait for the bus.",
        "Do you go hiking every Sunday?",
        "My sister goes climbing every weekend.",
        "I play the lottery every week.",
        "I do laundry every Sunday.",
    ],
)
def test_no_routine_of_now_forms_from_a_past_wished_or_unknown_one(content: str) -> None:
    assert _routines(content) == []


@pytest.mark.parametrize(
    ("verb", "gerund"),
    [("swim", "swimming"), ("bake", "baking"), ("hiking", "hiking"), ("wait", None)],
)
def test_a_verb_names_a_pastime_only_from_the_closed_list(verb: str, gerund: str | None) -> None:
    assert pastime(verb) == gerund
