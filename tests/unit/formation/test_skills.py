"""Learning to play an instrument or a game, and lessons taken, are what the speaker learns."""

from __future__ import annotations

import pytest

from tests.unit.formation.formed import formed


@pytest.mark.parametrize(
    ("content", "skill"),
    [
        ("I'm learning how to play the mandolin these days.", "mandolin"),
        ("I've been learning to play chess with my nephew.", "chess"),
        ("I'm taking pottery classes on Tuesdays.", "pottery"),
        ("I've been taking Portuguese lessons.", "Portuguese"),
    ],
)
def test_an_instrument_game_or_lesson_subject_forms_learning(content: str, skill: str) -> None:
    assert ("speaker", "learning", skill) in formed(content)


@pytest.mark.parametrize(
    "content",
    [
        "I'm learning to play it safe.",
        "I'm learning how to play nice with others.",
        "I'm taking night classes.",
        "I'm taking some classes.",
        "My son is learning to play the drums.",
        "I'd love to learn to play the harp.",
    ],
)
def test_a_figure_of_speech_a_bare_lesson_or_someone_elses_forms_no_learning(content: str) -> None:
    assert not {c for c in formed(content) if c[1] == "learning"}


def test_an_instrument_learned_without_to_play_is_learning() -> None:
    assert ("speaker", "learning", "cello") in formed("Busy week, just learning the cello.")


def test_a_pastime_started_is_learning_but_a_feeling_started_is_not() -> None:
    assert ("speaker", "learning", "bouldering") in formed("I started bouldering last spring.")
    assert not {c for c in formed("I started worrying less.") if c[1] == "learning"}
