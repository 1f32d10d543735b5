"""Favourites told with the thing first, and quoted titles loved, are lasting tastes."""

from __future__ import annotations

import pytest

from tests.unit.formation.formed import formed


@pytest.mark.parametrize(
    ("content", "thing"),
    [
        ("Moomin has always been a favorite of mine.", "Moomin"),
        ("Lemon tart is a real favourite of mine.", "Lemon tart"),
        ('I loved "The Overstory" so much.', "Overstory"),
        ('We adore "Paddington" in this house.', "Paddington"),
    ],
)
def test_a_named_favourite_or_a_loved_title_forms_a_preference(content: str, thing: str) -> None:
    assert ("speaker", "prefers", thing) in formed(content)


@pytest.mark.parametrize(
    "content",
    [
        "It has always been a favorite of mine.",
        "That one is a favorite of mine.",
        'I loved "it"!',
        'I loved "The Overstory" as a kid.',
        'She loved "Paddington".',
        'I loved "you did what you had to do and nobody can blame you for it at all".',
        "Is Moomin a favorite of yours?",
    ],
)
def test_a_pointer_a_childhood_memory_or_someone_elses_taste_forms_no_preference(
    content: str,
) -> None:
    assert not {c for c in formed(content) if c[1] == "prefers"}


@pytest.mark.parametrize(
    ("content", "thing"),
    [
        ("Chess's mostly my thing.", "chess"),
        ("Green's my fave colour.", "green"),
        ("Twin Peaks is my favorite show.", "Twin Peaks"),
    ],
)
def test_a_favourite_told_with_a_contraction_or_a_two_word_name_is_a_preference(
    content: str, thing: str
) -> None:
    assert ("speaker", "prefers", thing) in formed(content)
