"""The event contract: strict validation at the door, and JSON Schema exports kept current."""

from __future__ import annotations

import uuid

import pytest
from pydantic import ValidationError

from schemas.episodes import Message, TurnAppended, decode_episode
from schemas.export import export_json_schemas

VALID = {
    "schema_version": 1,
    "type": "turn.appended",
    "event_id": str(uuid.uuid4()),
    "tenant": "acme",
    "principal": "ana",
    "project": "garden",
    "session": "s1",
    "occurred_at": "2026-11-01T10:00:00Z",
    "messages": [{"ordinal": 0, "role": "user", "content": "I live in Lisbon."}],
}


def _with(**changes: object) -> dict[str, object]:
    return {**VALID, **changes}


def test_the_exported_json_schemas_match_the_models() -> None:
    assert export_json_schemas(check=True) == [], "run `engram schemas export`"


def test_a_valid_turn_decodes_to_its_type() -> None:
    import orjson

    assert isinstance(decode_episode(orjson.dumps(VALID)), TurnAppended)


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"occurred_at": "2026-11-01T10:00:00"}, "occurred_at"),
        ({"type": "turn.exploded"}, "type"),
        ({"tenant": "a/b"}, "tenant"),
        ({"messages": []}, "messages"),
        ({"unexpected": 1}, "unexpected"),
        ({"messages": [{"ordinal": 0, "role": "robot", "content": "x"}]}, "role"),
    ],
)
def test_an_invalid_episode_is_refused_naming_the_field(
    change: dict[str, object], field: str
) -> None:
    import orjson

    with pytest.raises(ValidationError) as error:
        decode_episode(orjson.dumps(_with(**change)))
    assert field in str(error.value)


def test_message_ordinals_must_increase() -> None:
    messages = [
        {"ordinal": 1, "role": "user", "content": "a"},
        {"ordinal": 0, "role": "user", "content": "b"},
    ]
    with pytest.raises(ValidationError, match="ordinals"):
        TurnAppended.model_validate(_with(messages=messages))


def test_only_a_user_message_can_carry_owner_trust() -> None:
    with pytest.raises(ValidationError, match="owner"):
        Message(ordinal=0, role="tool", content="x", trust="owner")  # type: ignore[arg-type]
    assert Message(ordinal=0, role="tool", content="x").effective_trust == "untrusted"  # type: ignore[arg-type]
    assert Message(ordinal=0, role="user", content="x").effective_trust == "owner"  # type: ignore[arg-type]
