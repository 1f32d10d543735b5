"""Outings told with the people taken along, or as "I've gone …", are past participation."""

from __future__ import annotations

import pytest

from tests.unit.formation.formed import formed


@pytest.mark.parametrize(
    ("content", "outing"),
    [
        ("Last Saturday I took my nephew fishing at the lake.", "fishing (2024-05-04)"),
        ("I took the kids kayaking, it was chaos.", "kayaking"),
        ("I've gone snorkeling twice now.", "snorkeling"),
    ],
)
def test_an_outing_with_people_along_or_gone_on_is_the_speakers(content: str, outing: str) -> None:
    assert ("speaker", "participated_in", outing) in formed(content)


@pytest.mark.parametrize(
    "content",
    [
        "I took my time deciding.",
        "I took my car washing.",
        "My sister took her kids fishing.",
        "I've never gone skiing.",
        "I'd love to take my dad sailing.",
    ],
)
def test_a_figure_a_thing_someone_elses_outing_or_a_wish_forms_no_outing(content: str) -> None:
    assert not {c for c in formed(content) if c[1] == "participated_in"}
