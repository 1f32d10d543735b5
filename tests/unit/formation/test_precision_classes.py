"""Issue 27's precision classes: what real talk made wrong or trivial beliefs of.

A bare verb, a fragment or an abstract noun is no taste; a sign-up or booking for something
ahead is a plan (with its date when the words give one), never a past event; a wish or advice
for the other person is not a fact about the speaker. Every sentence is written for this file.
"""

from __future__ import annotations

from datetime import date

import pytest

from engram.formation.deterministic.dates import ground_ahead
from tests.unit.formation.formed import EPISODE_DAY, formed


@pytest.mark.parametrize(
    "content",
    [
        "I prefer to wait.",
        "Honestly I'd rather wait.",
        "I like going.",
        "I love helping.",
        "I'm interested in goals.",
        "I prefer making new.",
        "I really enjoy trying more.",
        "I love dreams.",
    ],
)
def test_a_bare_verb_fragment_or_abstract_noun_is_no_taste(content: str) -> None:
    assert not {c for c in formed(content) if c[1] in {"prefers", "interested_in"}}


@pytest.mark.parametrize(
    ("content", "taste"),
    [
        ("I enjoy making new friends.", ("speaker", "prefers", "making new friends")),
        ("I love hiking.", ("speaker", "prefers", "hiking")),
        ("I'm interested in marine biology.", ("speaker", "interested_in", "marine biology")),
    ],
)
def test_a_real_taste_still_forms(content: str, taste: tuple[str, str, str]) -> None:
    assert taste in formed(content)


@pytest.mark.parametrize(
    ("content", "plan"),
    [
        ("I signed up for a pottery class yesterday.", "attend pottery class"),
        ("I signed up for a pottery class next month.", "attend pottery class (2024-06)"),
        ("I registered for a trail race next Saturday!", "attend trail race (2024-05-11)"),
        ("I just got tickets for the jazz festival.", "attend jazz festival"),
        (
            "I've enrolled in a ceramics workshop in two weeks.",
            "attend ceramics workshop (2024-W21)",
        ),
        ("I booked a flight to Reykjavik for the spring.", "take a trip to Reykjavik"),
        ("I'm going to a film festival next week.", "attend film festival (2024-W20)"),
    ],
)
def test_a_sign_up_or_booking_is_a_plan_not_a_past_event(content: str, plan: str) -> None:
    found = formed(content)
    assert ("speaker", "intends_to", plan) in found
    assert not {c for c in found if c[1] in {"participated_in", "occurred_on"}}


def test_a_sign_up_for_a_club_is_still_a_membership() -> None:
    assert formed("I signed up for a chess club on Monday.") == {
        ("speaker", "member_of", "chess club")
    }


@pytest.mark.parametrize(
    "content",
    [
        "I hope you get to go kayaking this weekend.",
        "You should join a choir, it's so much fun.",
        "I hope your trip to Porto is amazing!",
        "Hope you have a blast at the food festival.",
        "I'd recommend you try the noodle bar downtown.",
        "I hope you can adopt a kitten soon.",
        "You should sign up for the pottery class next month.",
        "I hope you find a job at the museum.",
    ],
)
def test_a_wish_or_advice_for_the_other_person_is_no_fact_about_the_speaker(
    content: str,
) -> None:
    assert formed(content) == set()


@pytest.mark.parametrize(
    ("words", "grounded"),
    [
        ("tomorrow", "2024-05-09"),
        ("next Saturday", "2024-05-11"),
        ("next Wed", "2024-05-15"),
        ("next week", "2024-W20"),
        ("next month", "2024-06"),
        ("next year", "2025"),
        ("in two weeks", "2024-W21"),
        ("in 3 days", "2024-05-11"),
        ("soon", None),
        ("last week", None),
    ],
)
def test_a_plan_is_dated_ahead_of_the_episode(words: str, grounded: str | None) -> None:
    assert ground_ahead(f"the class is {words}", EPISODE_DAY) == grounded
    assert ground_ahead(words, None) is None


def test_next_month_in_december_is_next_january() -> None:
    assert ground_ahead("next month", date(2024, 12, 3)) == "2025-01"
