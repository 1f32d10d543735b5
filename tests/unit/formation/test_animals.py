"""One belief per pet (issue 27, items 2 and 7): its kind however told, its name when given.

Every sentence is written for this file.
"""

from __future__ import annotations

import pytest

from engram.formation.deterministic.animals import named_pets, pet_kind
from tests.unit.formation.formed import batch, formed


@pytest.mark.parametrize(
    ("content", "name", "kind"),
    [
        ("I have a dog named Biscuit.", "Biscuit", "dog"),
        ("We have a cat called Miso.", "Miso", "cat"),
        ("Our cat Miso sleeps all day.", "Miso", "cat"),
        ("My dog Rex loves the beach.", "Rex", "dog"),
        ("We adopted a puppy called Nugget last month.", "Nugget", "puppy"),
        ("Biscuit is my dog.", "Biscuit", "dog"),
        ("Oscar, my guinea pig, squeaks at the fridge.", "Oscar", "guinea pig"),
        ("My little bunny Clover hops around the garden.", "Clover", "bunny"),
    ],
)
def test_a_named_pet_is_one_belief_carrying_its_name(content: str, name: str, kind: str) -> None:
    owned = [(c.object.text, c.facet) for c in batch(content).candidates if c.relation == "owns"]
    assert owned == [(kind, f"name:{name.lower()}")]


@pytest.mark.parametrize(
    ("content", "pet"),
    [
        ("I love my dogs. My dog is great. I walked my two dogs.", "dog"),
        ("I took my pups to the park. My puppy is sweet.", "puppy"),
        ("I have two dogs.", "dog"),
        ("I just adopted this cute pup from a shelter.", "puppy"),
        ("The kitties slept on my lap, I love my kittens.", "kitten"),
    ],
)
def test_the_ways_one_pet_is_told_collapse_into_one_belief(content: str, pet: str) -> None:
    assert formed(content) == {("speaker", "owns", pet)}


@pytest.mark.parametrize(
    "content",
    [
        "My neighbour has a dog named Rex.",
        "Pip is my aunt's parrot.",
        "My dog Max passed away last year.",
        "Rosa's cat Tiger is huge.",
    ],
)
def test_a_pet_that_is_not_the_speakers_or_is_gone_forms_nothing(content: str) -> None:
    assert not {c for c in formed(content) if c[1] == "owns"}


@pytest.mark.parametrize(
    ("word", "kind"),
    [
        ("pups", "puppy"),
        ("puppies", "puppy"),
        ("kitties", "kitten"),
        ("dogs", "dog"),
        ("two turtles", "turtle"),
        ("guinea pigs", "guinea pig"),
        ("horses", "horse"),
        ("dog bed", None),
        ("hotdogs", None),
    ],
)
def test_a_pet_word_settles_to_its_kind(word: str, kind: str | None) -> None:
    assert pet_kind(word) == kind


def test_a_capital_after_a_pet_is_a_name_only_when_it_can_be_one() -> None:
    assert named_pets("I walked my dog And then I slept") == []
    assert named_pets("my cat Sunday morning was asleep") == []
    assert named_pets("my dog Rex and my cat Miso") == [("Rex", "dog"), ("Miso", "cat")]


def test_two_named_pets_are_two_beliefs() -> None:
    content = "I walked my dog Rex. Then my dog Bo ate and my cat Miso slept."
    found = [(c.object.text, c.facet) for c in batch(content).candidates]
    assert found == [("dog", "name:rex"), ("dog", "name:bo"), ("cat", "name:miso")]


@pytest.mark.parametrize(
    ("content", "pet", "name"),
    [
        ("Big news, I got a puppy last week! Her name's Clementine.", "puppy", "clementine"),
        ("I adopted a kitten. His name is Pickles and he bites.", "kitten", "pickles"),
    ],
)
def test_a_name_told_in_the_next_clause_is_the_pets(content: str, pet: str, name: str) -> None:
    owned = [(c.object.text, c.facet) for c in batch(content).candidates if c.relation == "owns"]
    assert owned == [(pet, f"name:{name}")]


def test_a_name_after_no_pet_names_nothing() -> None:
    assert formed("I met a climber at the gym. Her name is Ana.") == set()
