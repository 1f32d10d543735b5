"""The speaker's own concrete plans and decisions form; wishes and other people's plans do not."""

from __future__ import annotations

import pytest

from tests.unit.formation.formed import formed


@pytest.mark.parametrize(
    ("content", "claim"),
    [
        ("I'm opening a bike shop.", ("intends_to", "open a bike shop")),
        ("I need a spot to open my own tea room cafe.", ("intends_to", "open a tea room cafe")),
        ("Researching adoption agencies lately.", ("intends_to", "adopt")),
        (
            "I'm planning a trip to Oaxaca next month.",
            ("intends_to", "take a trip to Oaxaca (2024-06)"),
        ),
        (  # a household's plan is the speaker's too (issue 39, pattern 9): never the project's
            "We're planning a trip to Oaxaca next month.",
            ("intends_to", "take a trip to Oaxaca (2024-06)"),
        ),
        (
            "I'm going to a jazz festival next week.",
            ("intends_to", "attend jazz festival (2024-W20)"),
        ),
        ("I decided to learn the cello.", ("committed_to", "learn the cello")),
    ],
)
def test_the_speakers_own_concrete_plans_and_decisions_form(
    content: str, claim: tuple[str, str]
) -> None:
    assert ("speaker", *claim) in formed(content)


def test_a_named_event_coming_up_is_a_plan_and_a_bare_one_is_not() -> None:
    assert ("speaker", "intends_to", "attend book fair") in formed("I have a book fair coming up.")
    assert not {c for c in formed("I have a meeting coming up.") if c[1] == "intends_to"}


@pytest.mark.parametrize(
    "content",
    [
        "My neighbour is opening a bike shop.",
        "I'd love to open a bike shop someday.",
        "They're planning a trip to Oaxaca.",
        "He decided to learn the cello.",
        "I decided to do it anyway.",
        "I'm going to the dentist.",
    ],
)
def test_wishes_other_peoples_plans_and_pointing_decisions_form_no_plan(content: str) -> None:
    assert not {c for c in formed(content) if c[1] in {"intends_to", "committed_to"}}
