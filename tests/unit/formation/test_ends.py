"""The precision gate: an end that is not a noun phrase or a name forms nothing."""

from __future__ import annotations

import pytest

from engram.formation.deterministic.ends import clean_object, ownable, well_formed
from engram.formation.deterministic.findings import Finding
from tests.unit.formation.formed import batch, formed


@pytest.mark.parametrize(
    "content",
    [
        "I've always had a deep love for sailing.",
        "I got some really good advice from my aunt.",
        "I have plenty of reasons to stay.",
        "I got into a real pickle with the neighbours.",
        "I had a blast at the fair.",
        "I got great news today!",
        "I've got some other stuff in the attic.",
    ],
)
def test_have_or_got_with_an_abstract_noun_is_not_ownership(content: str) -> None:
    assert not {c for c in formed(content) if c[1] == "owns"}


def test_owns_needs_a_concrete_possession_or_a_name() -> None:
    assert formed("I own a canoe.") == {("speaker", "owns", "canoe")}
    assert formed("I have a Vespa.") == {("speaker", "owns", "Vespa")}
    assert ownable("2019 Subaru Outback") and not ownable("great respect")


@pytest.mark.parametrize(
    "content",
    [
        "I love it when it rains.",
        "I'm a huge fan of this genre.",
        "I love the headway I've been making.",
        "I like to just watch the waves- they calm me.",
        "I love pitching in and making it a nicer street.",
        "I love going hiking or playing cards.",
        "I love getting lost in long novels.",
    ],
)
def test_a_preference_for_a_pronoun_clause_or_fragment_forms_nothing(content: str) -> None:
    assert not {c for c in formed(content) if c[1] == "prefers" and c[2] != "pitching in"}


def test_a_plain_preference_list_still_splits_into_items() -> None:
    assert formed("I enjoy chess, sudoku and crosswords.") == {
        ("speaker", "prefers", "chess"),
        ("speaker", "prefers", "sudoku"),
        ("speaker", "prefers", "crosswords"),
    }


@pytest.mark.parametrize(
    "content",
    [
        "We have different tastes in music.",
        "We love hiking with the dogs.",
        "We're like a family at the gym.",
        "We got lots of donations.",
        "We're part of a bigger picture.",
    ],
)
def test_we_about_a_household_is_not_the_project(content: str) -> None:
    assert not {c for c in formed(content) if c[0] == "proj"}


@pytest.mark.parametrize(
    "content",
    [
        "We'll keep going and never give up.",
        "We'll let you know.",
        "We'll have some great times together.",
        "we'll be chatting about the plot next time",
    ],
)
def test_a_well_pleasantry_is_not_a_project_commitment(content: str) -> None:
    assert formed(content) == set()


def test_a_well_that_commits_the_projects_work_still_forms() -> None:
    assert formed("We'll deploy the API on Fridays.") == {
        ("proj", "committed_to", "deploy the API on Fridays")
    }


@pytest.mark.parametrize(
    "content",
    [
        "I'm using it to budget.",
        "I've been working on something special.",
        "I'm working on a project.",
        "I'm learning alongside them.",
        "I'm learning loads.",
    ],
)
def test_pronoun_and_placeholder_objects_form_nothing(content: str) -> None:
    assert formed(content) == set()


def test_a_relatives_possessive_name_loses_its_s() -> None:
    assert ("speaker", "related_to", "Ines") in formed("It was for my niece Ines's party.")


def test_a_task_subject_that_is_a_fragment_forms_no_status() -> None:
    assert formed("I finished off my notes for the course.") == set()


def test_well_formed_refuses_dangling_function_words_and_clauses() -> None:
    assert well_formed("road bike")
    assert not well_formed("making it a")
    assert not well_formed("this series is one of my favorites")
    assert not well_formed("by working together we can build a")


def test_a_speaker_object_survives_only_for_social_relations() -> None:
    assert clean_object(Finding("Bo", "manages", "I")) is not None
    assert clean_object(Finding("I", "prefers", "me")) is None


def test_a_noun_after_an_activity_in_a_list_is_the_activitys_object_not_a_preference() -> None:
    assert ("speaker", "prefers", "lyrics") not in formed(
        "I love getting absorbed in the melody and lyrics."
    )


def test_only_prefer_compares_love_to_is_not_a_comparison() -> None:
    assert formed("I love retreating to that cabin.") == set()
    assert formed("I prefer tea to coffee.") == {("speaker", "prefers", "tea")}


def test_a_pointing_this_inside_an_activity_is_dropped_not_kept() -> None:
    assert formed("I love baking this rye bread.") == {("speaker", "prefers", "baking rye bread")}


def test_an_anaphoric_list_item_is_not_an_item_of_its_own() -> None:
    assert formed("I'm passionate about birds and their habitats.") == {
        ("speaker", "interested_in", "birds")
    }


def test_a_named_facet_survives_tidying_the_object() -> None:
    (candidate,) = batch("My favorite snack is this salty liquorice.").candidates
    assert (candidate.object.text, candidate.facet) == ("salty liquorice", "topic:snack")


def test_every_abstention_is_traced_with_its_reason() -> None:
    from engram.formation.deterministic import trace

    found = trace('We love hiking. I have a deep love for maps. "I live in Oslo," the card read.')
    assert found.proposals == []
    assert [a.reason for a in found.abstentions] == [
        '"we" here is not the project\'s work',
        "owns needs something ownable",
        "inside quoted or reported speech",
    ]
