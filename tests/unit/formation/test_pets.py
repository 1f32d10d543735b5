"""The speaker's pets, told in passing or by the household; "we" owns nothing else."""

from __future__ import annotations

import pytest

from tests.unit.formation.formed import formed


@pytest.mark.parametrize(
    ("content", "pet"),
    [
        ("We adopted a kitten last month.", "kitten"),
        ("We just rescued two ferrets.", "ferret"),  # one belief per pet, however many
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


@pytest.mark.parametrize(
    ("content", "pet"),
    [
        ("I took my hamsters out to the garden today.", "hamster"),
        ("On the bright side, I just adopted this sweet old kitten from the shelter.", "kitten"),
        ("Honestly my rabbit always cheers me up.", "rabbit"),
    ],
)
def test_a_pet_mentioned_in_a_story_is_the_speakers(content: str, pet: str) -> None:
    assert ("speaker", "owns", pet) in formed(content)


@pytest.mark.parametrize(
    "content",
    [
        "Here's my horse painting from last week.",
        "I miss my dog so much.",
        "My childhood cat was called Biscuit.",
        "I adopted this idea from my aunt.",
        "Her dog is so cute.",
    ],
)
def test_a_pet_as_a_modifier_gone_long_ago_or_someone_elses_is_not_owned(content: str) -> None:
    assert not {c for c in formed(content) if c[1] == "owns"}
