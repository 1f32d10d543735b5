"""Every JSON door of the API on real Kafka and PostgreSQL reads its body one way: a number that
is not finite (``NaN``, ``Infinity``, ``-Infinity``, ``1e400``) or a field the contract does not
have is a 422 naming the field — never a 500, never silently dropped — and a 422 quotes at most
a bounded excerpt of what it refused. The MCP tools refuse an argument they do not take, the
same way. Nothing refused is appended."""

from __future__ import annotations

import asyncio
import json
import sys
import uuid
from typing import Any

import asyncpg
import pytest
from fastapi.testclient import TestClient
from mcp import Client, StdioServerParameters
from pydantic import SecretStr

from engram.api import create_api
from engram.infra.settings import (
    DatabaseSettings,
    KafkaSettings,
    KeysSettings,
    Settings,
    WebhooksSettings,
)
from engram.keys.kek import new_kek_text
from engram.service.tokens import create_token
from engram.web.invalid import MAX_ECHO_CHARS
from tests.e2e.test_api_ingest import _log_records
from tests.support.episodes import turn
from tests.support.isolation import REPO, Isolated

pytestmark = pytest.mark.e2e

NON_FINITE = ["NaN", "Infinity", "-Infinity", "1e400", "-1e400"]


def _client(isolated: Isolated, kafka: KafkaSettings) -> TestClient:
    settings = Settings(
        kafka=kafka,
        database=DatabaseSettings(url=isolated.database_url),
        keys=KeysSettings(kek=SecretStr(new_kek_text())),
        webhooks=WebhooksSettings(allow_private=True),
    )
    return TestClient(create_api(settings), raise_server_exceptions=False)


def _post(client: TestClient, path: str, raw: str, token: str) -> tuple[int, Any]:
    headers = {"Authorization": f"Bearer {token}", "Content-Type": "application/json"}
    with client:
        response = client.post(path, content=raw.encode(), headers=headers)
    return response.status_code, response.json()


def _named(answer: Any, *loc: object) -> bool:
    return any(tuple(e["loc"][-len(loc) :]) == loc for e in answer["detail"])


def _with(body: dict[str, Any], path: tuple[object, ...], literal: str) -> str:
    """``body`` as JSON text with the value at ``path`` replaced by the bare ``literal``."""
    marker = f"__literal_{uuid.uuid4().hex}__"
    node: Any = body
    for step in path[:-1]:
        node = node[step]
    node[path[-1]] = marker
    return json.dumps(body).replace(f'"{marker}"', literal)


def _bodies(tenant: str) -> dict[str, dict[str, Any]]:
    return {
        "/v1/turns": turn(tenant, "ana", "p", "I live in Oslo.").model_dump(mode="json"),
        "/v1/remember": {
            "event_id": str(uuid.uuid4()),
            "project": "p",
            "session": "s",
            "occurred_at": "2026-01-01T00:00:00Z",
            "message": {"ordinal": 0, "role": "user", "content": "I live in Oslo."},
        },
        f"/v1/beliefs/{uuid.uuid4()}/corrections": {"kind": "untrue"},
        "/v1/webhooks": {"project": "p", "url": "http://127.0.0.1:9/hook"},
    }


PLACES: dict[str, list[tuple[object, ...]]] = {
    "/v1/turns": [("messages", 0, "ordinal"), ("messages", 0, "content"), ("session",)],
    "/v1/remember": [("message", "ordinal"), ("project",)],
    "corrections": [("kind",), ("project",)],
    "/v1/webhooks": [("url",), ("events",)],
}


async def test_a_non_finite_number_anywhere_is_a_422_naming_the_field(
    isolated: Isolated, kafka: KafkaSettings, pool: asyncpg.Pool
) -> None:
    t = isolated.tenant
    _, principal = await create_token(pool, tenant=t, principal="ana")
    _, operator = await create_token(pool, tenant=t, principal=None)
    client = _client(isolated, kafka)
    for path, body in _bodies(t).items():
        token = operator if path == "/v1/webhooks" else principal
        places = PLACES["corrections" if path.endswith("corrections") else path]
        for place in [*places, ("not_a_field",)]:
            for literal in NON_FINITE:
                raw = _with(json.loads(json.dumps(body)), place, literal)
                status, answer = await asyncio.to_thread(_post, client, path, raw, token)
                assert status == 422, (path, place, literal, answer)
                assert _named(answer, *place), (path, place, literal, answer)
    # Nested deep inside an array, the position is named to the index.
    raw = _with({"turns": [_bodies(t)["/v1/turns"]]}, ("turns", 0, "messages", 0, "ordinal"), "NaN")
    status, answer = await asyncio.to_thread(_post, client, "/v1/turns", raw, principal)
    assert status == 422 and _named(answer, "turns", 0, "messages", 0, "ordinal"), answer
    assert "finite" in json.dumps(answer), answer
    assert await _log_records(kafka) == []


async def test_a_field_the_contract_does_not_have_is_refused_at_every_door(
    isolated: Isolated, kafka: KafkaSettings, pool: asyncpg.Pool
) -> None:
    t = isolated.tenant
    _, principal = await create_token(pool, tenant=t, principal="ana")
    _, operator = await create_token(pool, tenant=t, principal=None)
    client = _client(isolated, kafka)
    bodies = _bodies(t)
    correction = next(p for p in bodies if p.endswith("corrections"))
    cases: list[tuple[str, dict[str, Any], tuple[object, ...]]] = [
        (correction, {"kind": "not_here", "projet": "work"}, ("projet",)),
        ("/v1/remember", {**bodies["/v1/remember"], "importance": "high"}, ("importance",)),
        (
            "/v1/remember",
            {**bodies["/v1/remember"], "message": {**bodies["/v1/remember"]["message"], "x": 1}},
            ("message", "x"),
        ),
        ("/v1/turns", {**bodies["/v1/turns"], "importance": 1}, ("importance",)),
        ("/v1/webhooks", {**bodies["/v1/webhooks"], "secret": "mine"}, ("secret",)),
    ]
    for path, body, loc in cases:
        token = operator if path == "/v1/webhooks" else principal
        status, answer = await asyncio.to_thread(_post, client, path, json.dumps(body), token)
        assert status == 422 and _named(answer, *loc), (path, answer)
        assert any(e["type"] == "extra_forbidden" for e in answer["detail"]), answer
    assert await _log_records(kafka) == []
    assert await pool.fetchval("SELECT count(*) FROM webhook_endpoint") == 0


async def test_a_422_quotes_a_bounded_excerpt_of_what_it_refused(
    isolated: Isolated, kafka: KafkaSettings, pool: asyncpg.Pool
) -> None:
    t = isolated.tenant
    _, principal = await create_token(pool, tenant=t, principal="ana")
    client = _client(isolated, kafka)
    body = _bodies(t)["/v1/turns"]
    long_text = "Lisbon " * 15_000
    cases = [
        ("session", long_text),
        ("messages", [{"ordinal": 0, "role": "user", "content": long_text}] * 40),
        ("occurred_at", {str(i): long_text[:1000] for i in range(500)}),
        ("session", json.loads("[" * 500 + "]" * 500)),
        ("turns", [{"type": "turn.appended"}] * 400),
    ]
    for field, value in cases:
        raw = json.dumps({**body, field: value})
        status, answer = await asyncio.to_thread(_post, client, "/v1/turns", raw, principal)
        assert status == 422, answer
        for error in answer["detail"]:
            assert len(json.dumps(error.get("input"))) <= 2 * MAX_ECHO_CHARS, (field, error)
        assert len(json.dumps(answer)) < 200_000, field
    assert await _log_records(kafka) == []


async def test_mcp_tools_refuse_an_argument_they_do_not_take(
    isolated: Isolated, kafka: KafkaSettings, pool: asyncpg.Pool
) -> None:
    _, token = await create_token(pool, tenant=isolated.tenant, principal="ana")
    env = {**isolated.env(partitions=1), "ENGRAM_MCP_TOKEN": token}
    server = StdioServerParameters(
        command=sys.executable, args=["-m", "engram", "mcp"], env=env, cwd=str(REPO)
    )
    async with Client(server) as agent:
        for tool in (await agent.list_tools()).tools:
            assert tool.input_schema.get("additionalProperties") is False, tool.name
        calls = [
            ("correct", "projet", {"belief_id": str(uuid.uuid4()), "kind": "not_here"}),
            ("remember", "importance", {"text": "I live in Oslo.", "project": "p"}),
            ("recall", "limt", {"query": "Oslo"}),
            ("delete", "wait", {"belief_id": str(uuid.uuid4())}),
        ]
        for name, extra, arguments in calls:
            result = await agent.call_tool(name, {**arguments, extra: "work"})
            said = str(result.content)
            assert result.is_error and extra in said and "xtra" in said, (name, said)
    assert await _log_records(kafka) == []
