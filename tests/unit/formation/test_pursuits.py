"""Passions, groups, outings, faves and jobs told in passing: the speaker's own, and only theirs."""

from __future__ import annotations

import pytest

from tests.unit.formation.formed import formed


@pytest.mark.parametrize(
    ("content", "claim"),
    [
        ("Sorry, I'm late 'cause I'm passionate about birding.", ("interested_in", "birding")),
        ("Still following my passion for glassblowing.", ("interested_in", "glassblowing")),
        ("Always been fascinated by tide pools.", ("interested_in", "tide pools")),
        ("My passion for sailing never faded.", ("interested_in", "sailing")),
        ("I showed it to my quilting circle.", ("member_of", "quilting circle")),
    ],
)
def test_the_speakers_own_pursuits_form_from_inside_a_longer_clause(
    content: str, claim: tuple[str, str]
) -> None:
    assert ("speaker", *claim) in formed(content)


def test_an_outing_told_with_went_is_a_past_participation() -> None:
    assert ("speaker", "participated_in", "snorkeling") in formed("I went snorkeling on Friday.")


@pytest.mark.parametrize(
    "content",
    [
        "My neighbour is opening a bike shop.",
        "I'd love to open a bike shop someday.",
        "My friend group is the best.",
        "Now I'm passionate about making a calm, open space.",
        "Her sister went snorkeling.",
        "They're planning a trip to Oaxaca.",
    ],
)
def test_someone_elses_plans_wishes_and_cut_phrases_form_no_pursuit(content: str) -> None:
    pursuits = {"interested_in", "member_of", "intends_to", "participated_in"}
    assert not {c for c in formed(content) if c[1] in pursuits}


def test_an_elided_cause_is_not_a_quotation() -> None:
    """ "'cause" opens no quote, so the clause after it is still the speaker's."""
    assert ("speaker", "interested_in", "knitting") in formed(
        "I'm selling scarves 'cause I'm passionate about knitting."
    )


def test_a_relative_clause_describes_a_possession_without_becoming_part_of_it() -> None:
    assert ("speaker", "owns", "canoe") in formed("I have a canoe that my aunt built.")


@pytest.mark.parametrize(
    ("content", "claim"),
    [
        ("Baking bread is one of my faves.", ("prefers", "baking bread")),
        ("I've been looking into marine biology.", ("interested_in", "marine biology")),
        ("I had a potluck with my coworkers.", ("participated_in", "potluck")),
    ],
)
def test_coming_events_faves_interests_and_decisions_form(
    content: str, claim: tuple[str, str]
) -> None:
    assert ("speaker", *claim) in formed(content)


@pytest.mark.parametrize(
    "content",
    [
        "I'm going to the dentist.",
        "I had a good day.",
        "I decided to do it anyway.",
        "He decided to learn the cello.",
        "I'm really passionate about making sure kids are safe.",
    ],
)
def test_places_feelings_pointing_and_other_people_form_no_plan_or_event(content: str) -> None:
    kinds = {"intends_to", "participated_in", "committed_to", "interested_in"}
    assert not {c for c in formed(content) if c[1] in kinds}


def test_a_lost_job_at_an_employer_retracts_working_there() -> None:
    assert ("speaker", "no longer works_at", "bottling plant") in formed(
        "I lost my job at the bottling plant."
    )


@pytest.mark.parametrize(
    ("content", "claims"),
    [
        ("Salsa is my top pick.", {("speaker", "prefers", "salsa")}),
        (
            "Puzzles and card games are my thing.",
            {("speaker", "prefers", "puzzles"), ("speaker", "prefers", "card games")},
        ),
    ],
)
def test_a_thing_named_first_as_my_pick_is_a_preference(
    content: str, claims: set[tuple[str, str, str]]
) -> None:
    assert claims <= formed(content)
