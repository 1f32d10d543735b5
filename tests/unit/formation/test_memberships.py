"""Groups joined or belonged to, told anywhere in a clause, are the speaker's memberships."""

from __future__ import annotations

import pytest

from tests.unit.formation.formed import formed


@pytest.mark.parametrize(
    ("content", "group"),
    [
        ("Last night I joined a vintage radio forum.", "vintage radio forum"),
        ("On Monday I signed up for a trail running club.", "trail running club"),
        ("I asked my aunt to join the online grief group I'm a part of.", "online grief group"),
        ("I'm a member of a local astronomy society.", "local astronomy society"),
    ],
)
def test_a_group_the_speaker_joined_or_belongs_to_forms_a_membership(
    content: str, group: str
) -> None:
    assert ("speaker", "member_of", group) in formed(content)


@pytest.mark.parametrize(
    "content",
    [
        "My cousin joined a rowing club.",
        "I joined a group of tourists at the gate.",
        "I joined a friend group chat.",
        "I'd love to join a choir someday.",
        "Should I join the chess club?",
        "I almost joined the family group.",
    ],
)
def test_someone_elses_group_a_crowd_a_wish_or_a_question_forms_no_membership(
    content: str,
) -> None:
    assert not {c for c in formed(content) if c[1] == "member_of"}
