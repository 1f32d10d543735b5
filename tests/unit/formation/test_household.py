"""A pet the household took home or names is the speaker's pet; "we" owns nothing else."""

from __future__ import annotations

import pytest

from tests.unit.formation.formed import formed


@pytest.mark.parametrize(
    ("content", "pet"),
    [
        ("We adopted a kitten last month.", "kitten"),
        ("We just rescued two ferrets.", "ferrets"),
        ("Our dog Biscuit loves the snow.", "dog"),
    ],
)
def test_a_household_pet_is_the_speakers_pet(content: str, pet: str) -> None:
    assert ("speaker", "owns", pet) in formed(content)


@pytest.mark.parametrize(
    "content",
    [
        "Our dog Biscuit passed away in the spring.",
        "We adopted a new workflow.",
        "We got a new espresso machine for the office.",
        "They adopted a puppy.",
        "We'd love to adopt a puppy.",
    ],
)
def test_a_gone_pet_or_anything_else_we_got_forms_no_ownership(content: str) -> None:
    assert not {c for c in formed(content) if c[1] == "owns"}
