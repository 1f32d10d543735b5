"""The type contract at every door, on real Kafka and PostgreSQL: a value of another type than
the published JSON Schema gives its field — an ordinal as ``"0"``, a time as a Unix number, a
schema version as ``true``, an id without its hyphens — is refused, never coerced: a 422 naming
the field over HTTP, the line and the field from ``engram ingest`` (exit 2); a body that is not
UTF-8 or nests too deeply is a 422 that says where, not a bare 400. Nothing refused is appended.
(A raw write of the same values is dead-lettered naming the field:
``tests/integration/test_dead_letters.py``.)"""

from __future__ import annotations

import asyncio
import json
import uuid
from pathlib import Path
from typing import Any

import asyncpg
import pytest

from engram.infra.settings import KafkaSettings
from engram.service.tokens import create_token
from tests.e2e.test_api_ingest import _log_records
from tests.e2e.test_text_contract import _client, _ingest, _named, _send
from tests.support.episodes import turn
from tests.support.isolation import Isolated

pytestmark = pytest.mark.e2e

SPOILED: list[tuple[str, dict[str, Any], tuple[object, ...]]] = [
    ("ordinal as a string", {"message": {"ordinal": "0"}}, ("messages", 0, "ordinal")),
    ("ordinal as a float", {"message": {"ordinal": 0.0}}, ("messages", 0, "ordinal")),
    ("ordinal as a boolean", {"message": {"ordinal": False}}, ("messages", 0, "ordinal")),
    ("time as a number", {"occurred_at": 1790000000}, ("occurred_at",)),
    ("time as digits", {"occurred_at": "1790000000"}, ("occurred_at",)),
    ("time with a space", {"occurred_at": "2026-01-01 10:00:00Z"}, ("occurred_at",)),
    ("version as a string", {"schema_version": "1"}, ("schema_version",)),
    ("version as a boolean", {"schema_version": True}, ("schema_version",)),
    ("id without hyphens", {"event_id": uuid.UUID(int=7).hex}, ("event_id",)),
]


def _turn(tenant: str, spoiled: dict[str, Any]) -> dict[str, Any]:
    body = turn(tenant, "ana", "p", "I live in Oslo.").model_dump(mode="json")
    body["messages"][0].update(spoiled.get("message", {}))
    body.update({k: v for k, v in spoiled.items() if k != "message"})
    return body


async def test_http_refuses_every_coercible_type_naming_the_field(
    isolated: Isolated, kafka: KafkaSettings, pool: asyncpg.Pool
) -> None:
    t = isolated.tenant
    _, token = await create_token(pool, tenant=t, principal="ana")
    client = _client(isolated, kafka)

    def post(path: str, raw: bytes) -> tuple[int, Any]:
        return _send(client, "POST", path, token, raw=raw)

    for label, spoiled, loc in SPOILED:
        body = json.dumps(_turn(t, spoiled)).encode()
        status, answer = await asyncio.to_thread(post, "/v1/turns", body)
        assert status == 422 and _named(answer, *loc), (label, answer)
    remember = {
        "event_id": str(uuid.uuid4()),
        "project": "p",
        "session": "s",
        "occurred_at": 1790000000,
        "message": {"ordinal": "0", "role": "user", "content": "I live in Oslo."},
    }
    status, answer = await asyncio.to_thread(post, "/v1/remember", json.dumps(remember).encode())
    assert status == 422, answer
    assert _named(answer, "occurred_at") and _named(answer, "message", "ordinal"), answer
    assert await _log_records(kafka) == []


async def test_an_unreadable_body_is_a_422_that_says_where(
    isolated: Isolated, kafka: KafkaSettings, pool: asyncpg.Pool
) -> None:
    t = isolated.tenant
    _, token = await create_token(pool, tenant=t, principal="ana")
    client = _client(isolated, kafka)
    good = json.dumps(_turn(t, {}), indent=1).encode()
    not_utf8 = good.replace(b"Oslo", b"Os\xfflo")
    line = good[: good.index(b"Oslo")].count(b"\n") + 1
    for raw, said in (
        (not_utf8, f"the body is not UTF-8: byte 0xff (byte {good.index(b'Oslo') + 2}) at line "),
        (b'{"turns": ' + b"[" * 100_000 + b"]" * 100_000 + b"}", "nest too deeply"),
        (good.replace(b'"tenant"', b"tenant"), "Expecting property name enclosed in double"),
    ):
        status, answer = await asyncio.to_thread(_send, client, "POST", "/v1/turns", token, raw=raw)
        assert status == 422, answer
        [error] = answer["detail"]
        assert error["type"] == "json_invalid" and said in error["ctx"]["error"], answer
    status, answer = await asyncio.to_thread(
        _send, client, "POST", "/v1/turns", token, raw=not_utf8
    )
    assert f"at line {line}, column" in answer["detail"][0]["ctx"]["error"]
    assert await _log_records(kafka) == []


async def test_engram_ingest_refuses_coercible_types_naming_the_line_and_field(
    isolated: Isolated, kafka: KafkaSettings, tmp_path: Path
) -> None:
    t = isolated.tenant
    good = json.dumps(_turn(t, {}))
    path = tmp_path / "turns.jsonl"
    cases = [
        (json.dumps(_turn(t, {"message": {"ordinal": "0"}})), "messages.0.ordinal"),
        (json.dumps(_turn(t, {"occurred_at": 1790000000})), "occurred_at: must be an RFC 3339"),
        (good.replace("Oslo", "Os\\ud800lo"), "messages.0.content: text must be Unicode"),
    ]
    for line, named in cases:
        path.write_text(good + "\n" + line + "\n")
        result = await asyncio.to_thread(_ingest, isolated, path, COLUMNS="500")  # one line
        said = result.stderr.decode()
        assert result.returncode == 2, said
        assert "turns.jsonl:2" in said and named in said and "nothing was appended" in said
    assert await _log_records(kafka) == []
