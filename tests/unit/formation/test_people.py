"""Issue 27: the facts people tell most about themselves, and one belief per thing.

Family and the names of people and animals, habits told as "love to <verb>", and what must not
become a kinship of the speaker. Every sentence is written for this file.
"""

from __future__ import annotations

import pytest

from tests.unit.formation.formed import batch, formed


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


@pytest.mark.parametrize(
    ("content", "kin"),
    [
        ("My husband is a nurse.", "husband"),
        ("My wife and I went to a pottery class.", "wife"),
        ("I took my two kids to the beach.", "child"),
        ("I have a daughter in Oslo.", "daughter"),
        ("Thanks Ana, my girlfriend is coming over.", "girlfriend"),
    ],
)
def test_an_unnamed_partner_or_child_is_one_belief_of_its_kind(content: str, kin: str) -> None:
    assert {c for c in formed(content) if c[1] == "related_to"} == {("speaker", "related_to", kin)}


@pytest.mark.parametrize(
    ("content", "name", "kin"),
    [
        ("My son Leo turned five yesterday.", "Leo", "son"),
        ("Our son Theo started school this week.", "Theo", "son"),
        ("I got engaged to Tom last month.", "Tom", "fiancé"),
        ("I married Priya in 2019.", "Priya", "spouse"),
        ("I have a son named Leo.", "Leo", "son"),
        ("I have a sister, Mia, in Madrid.", "Mia", "sister"),
    ],
)
def test_a_named_relative_is_one_belief_with_the_kin_as_facet(
    content: str, name: str, kin: str
) -> None:
    related = [
        (c.object.text, c.facet) for c in batch(content).candidates if c.relation == "related_to"
    ]
    assert related == [(name, kin)]


@pytest.mark.parametrize(
    "content",
    [
        "My ex-wife lives in Lyon.",
        "My late husband loved jazz.",
        "I'd love to have kids someday.",
        "I don't have kids.",
        "I don't have a sister named Mia.",
        "If I had a brother, I'd teach him chess.",
        "I hope your kids had fun.",
        "My mom called me twice today.",
        "My brother adopted a kitten.",
    ],
)
def test_a_relative_gone_wished_for_someone_elses_or_everyones_forms_nothing(
    content: str,
) -> None:
    assert not {c for c in formed(content) if c[1] == "related_to"}


@pytest.mark.parametrize(
    ("content", "owned"),
    [
        ("Just got a new camera!", "camera"),
        ("Got myself a new laptop.", "laptop"),
        ("Bought a new kayak last week.", "kayak"),
    ],
)
def test_a_possession_told_without_its_i_is_the_speakers(content: str, owned: str) -> None:
    assert formed(content) == {("speaker", "owns", owned)}


@pytest.mark.parametrize("content", ["Got it, thanks!", "Got home late.", "Just got an idea."])
def test_got_without_a_thing_owns_nothing(content: str) -> None:
    assert formed(content) == set()


@pytest.mark.parametrize(
    ("content", "name", "kin"),
    [
        ("Ana, my sister, lives in Porto.", "Ana", "sister"),
        ("Oh, Maya, my best friend, moved to Lisbon.", "Maya", "best friend"),
    ],
)
def test_a_name_set_off_before_the_kin_is_the_relatives(content: str, name: str, kin: str) -> None:
    related = [
        (c.object.text, c.facet, c.quote)
        for c in batch(content).candidates
        if c.relation == "related_to"
    ]
    assert [(n, k) for n, k, _ in related] == [(name, kin)]
    assert related[0][2] in content and related[0][2].startswith(name)


@pytest.mark.parametrize(
    "content",
    [
        "Ana, my sister is coming over.",
        "Thanks Ana, my sister, is here.",
        "Is Ana, my sister, coming?",
    ],
)
def test_a_name_addressed_or_asked_about_is_no_relative(content: str) -> None:
    assert not {c for c in formed(content) if c[1] == "related_to" and c[2] == "Ana"}
