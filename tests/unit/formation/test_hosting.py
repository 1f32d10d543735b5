"""An event the speaker is putting on is a plan: ``intends_to`` hold it, weakly."""

from __future__ import annotations

import pytest

from tests.unit.formation.formed import formed


@pytest.mark.parametrize(
    ("content", "plan"),
    [
        ("I'm throwing a housewarming party on Saturday.", "hold housewarming party"),
        ("Next month I'm having a solo photo exhibition!", "hold solo photo exhibition"),
        ("I'm organizing a beach cleanup.", "hold beach cleanup"),
    ],
)
def test_an_event_the_speaker_hosts_is_a_plan(content: str, plan: str) -> None:
    assert ("speaker", "intends_to", plan) in formed(content)


@pytest.mark.parametrize(
    "content",
    [
        "I'm having a rough week.",
        "I'm having a pottery class right now.",
        "I'm not hosting the charity gala this year.",
        "My brother is throwing a birthday party next week.",
        "I'd love to host a poetry reading someday.",
    ],
)
def test_a_passing_state_a_denial_or_someone_elses_event_forms_no_plan(content: str) -> None:
    assert not {c for c in formed(content) if c[1] == "intends_to"}
