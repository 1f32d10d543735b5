"""The event contract: strict validation at the door, and JSON Schema exports kept current."""

from __future__ import annotations

import json
import re
import uuid
from collections.abc import Callable
from typing import Any

import pytest
from pydantic import ValidationError

from engram.schemas.common import STORABLE_TEXT_PATTERN
from engram.schemas.episodes import Message, TurnAppended, decode_episode
from engram.schemas.export import export_json_schemas

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
        Message(ordinal=0, role="tool", content="x", trust="owner")
    assert Message(ordinal=0, role="tool", content="x").effective_trust == "untrusted"
    assert Message(ordinal=0, role="user", content="x").effective_trust == "owner"


def _from_json(value: dict[str, Any]) -> object:
    return decode_episode(json.dumps(value))


DECODERS: tuple[Callable[[dict[str, Any]], object], ...] = (_from_json, TurnAppended.model_validate)
"""JSON (the log, HTTP, ``engram ingest``) and Python (the client builds its episodes from the
models): every rule of the contract holds in both."""


def _message(**changes: object) -> dict[str, object]:
    return {"messages": [{"ordinal": 0, "role": "user", "content": "I live in Lisbon.", **changes}]}


@pytest.mark.parametrize(
    ("change", "where", "said"),
    [
        (
            _message(content="I live in Os\x00lo."),
            "messages.0.content",
            "U+0000 (NUL) at character 12",
        ),
        (_message(role="assistant", author="B\x00t"), "messages.0.author", "U+0000 (NUL)"),
        (_message(ordinal=2**31), "messages.0.ordinal", "less than or equal"),
        ({"occurred_at": "0001-01-01T00:00:00+14:00"}, "occurred_at", "clock fault"),
        ({"occurred_at": "2200-01-01T00:00:00Z"}, "occurred_at", "clock fault"),
        ({"occurred_at": "1899-12-31T23:59:59Z"}, "occurred_at", "clock fault"),
    ],
)
def test_text_and_values_engram_cannot_store_are_refused_naming_the_field(
    change: dict[str, object], where: str, said: str
) -> None:
    """The text contract: refused in JSON (the log, HTTP, ``engram ingest``) and in Python (the
    client builds its episodes from these models), with one message."""
    for decode in DECODERS:
        with pytest.raises(ValidationError) as error:
            decode(_with(**change))
        problem = error.value.errors()[0]
        assert ".".join(map(str, problem["loc"])).endswith(where) and said in problem["msg"]


def test_a_lone_surrogate_is_refused_and_a_pair_is_one_character() -> None:
    with pytest.raises(ValidationError) as error:
        TurnAppended.model_validate(_with(**_message(content="Lis\ud800bon")))
    assert "lone surrogate" in str(error.value)
    with pytest.raises(ValidationError):  # in JSON it is not even text
        decode_episode(json_text(_message(content="PLACE")).replace("PLACE", "Lis\\ud800bon"))
    paired = decode_episode(
        json_text(_message(content="PLACE")).replace("PLACE", "tea \\ud83c\\udf75")
    )
    assert isinstance(paired, TurnAppended)
    assert paired.messages[0].content == "tea \U0001f375"


@pytest.mark.parametrize(
    ("change", "where"),
    [
        (_message(ordinal="0"), "messages.0.ordinal"),
        (_message(ordinal=0.0), "messages.0.ordinal"),
        (_message(ordinal=True), "messages.0.ordinal"),
        ({"occurred_at": 1790000000}, "occurred_at"),
        ({"occurred_at": 1790000000.5}, "occurred_at"),
        ({"occurred_at": "1790000000"}, "occurred_at"),
        ({"occurred_at": "2026-11-01 10:00:00Z"}, "occurred_at"),
        ({"occurred_at": "2026-11-01T10:00:00+0000"}, "occurred_at"),
        ({"occurred_at": "2026-11-01T10:00Z"}, "occurred_at"),
        ({"schema_version": "1"}, "schema_version"),
        ({"schema_version": True}, "schema_version"),
        ({"schema_version": 1.0}, "schema_version"),
        ({"event_id": uuid.UUID(int=7).hex}, "event_id"),
        ({"event_id": "{" + str(uuid.UUID(int=7)) + "}"}, "event_id"),
        ({"event_id": "urn:uuid:" + str(uuid.UUID(int=7))}, "event_id"),
    ],
)
def test_a_value_of_another_type_than_the_schema_says_is_refused_not_coerced(
    change: dict[str, object], where: str
) -> None:
    """What pydantic's lax mode would convert ("0" to 0, a number to a Unix time, true to 1,
    bare hex to a UUID) is refused, in JSON and in Python alike, naming the field."""
    for decode in DECODERS:
        with pytest.raises(ValidationError) as error:
            decode(_with(**change))
        assert ".".join(map(str, error.value.errors()[0]["loc"])).endswith(where)


def test_what_the_schema_allows_still_decodes() -> None:
    for when in ("2026-11-01t10:00:00z", "2026-11-01T10:00:00.123456789+01:00"):
        assert TurnAppended.model_validate(_with(occurred_at=when))
    upper = str(uuid.UUID(int=7)).upper()
    assert TurnAppended.model_validate(_with(event_id=upper)).event_id == uuid.UUID(int=7)


def test_control_characters_and_the_time_bounds_themselves_are_valid() -> None:
    control = _message(content="I live in\x01 Oslo.\u202e\x1b[31m")
    assert TurnAppended.model_validate(_with(**control))
    for when in ("1900-01-01T00:00:00Z", "2199-12-31T23:59:59Z", "1970-01-01T00:00:00Z"):
        assert TurnAppended.model_validate(_with(occurred_at=when))


def test_the_json_schema_says_what_text_is_stored() -> None:
    content = Message.model_json_schema()["properties"]["content"]
    assert content["pattern"] == STORABLE_TEXT_PATTERN
    assert re.fullmatch(
        STORABLE_TEXT_PATTERN.encode().decode("unicode_escape"), "I live in Zürich 🏔️"
    )


def json_text(changes: dict[str, object]) -> str:
    import json

    return json.dumps(_with(**changes))
