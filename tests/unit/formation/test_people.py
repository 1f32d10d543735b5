"""Issue 27: the facts people tell most about themselves, and one belief per thing.

Family and the names of people and animals, habits told as "love to <verb>", and what must not
become a kinship of the speaker. Every sentence is written for this file.
"""

from __future__ import annotations

import pytest

from tests.unit.formation.formed import formed


@pytest.mark.parametrize(
    "content",
    [
        "Pip is my aunt's parrot.",
        "Rufus is my neighbour's dog and he barks all night.",
        "Mira is my cousin\u2019s daughter.",
    ],
)
def test_a_possessive_chain_is_no_kinship_of_the_speaker(content: str) -> None:
    assert not {c for c in formed(content) if c[1] == "related_to"}


def test_a_relative_named_by_the_inverted_copula_still_forms() -> None:
    assert ("speaker", "related_to", "Pip") in formed("Pip is my sister.")


@pytest.mark.parametrize(
    ("content", "taste"),
    [
        ("I love to bake.", "baking"),
        ("I like to paint on weekends.", "painting"),
        ("I really love to swim in the lake.", "swimming"),
        ("I love to read fantasy novels.", "reading fantasy novels"),
        ("I enjoy to garden every spring.", "gardening"),
    ],
)
def test_love_to_verb_is_the_same_taste_as_love_verbing(content: str, taste: str) -> None:
    assert {c for c in formed(content) if c[1] == "prefers"} == {("speaker", "prefers", taste)}


@pytest.mark.parametrize(
    "content",
    [
        "I prefer to wait.",
        "I like to restore old radios.",
        "I love to think about it.",
        "I'd love to bake for you sometime.",
    ],
)
def test_love_to_a_verb_that_names_no_pastime_forms_no_taste(content: str) -> None:
    assert not {c for c in formed(content) if c[1] == "prefers"}
