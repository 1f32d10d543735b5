"""The text contract at every door, on real Kafka and PostgreSQL: a NUL or a lone surrogate in
any field that carries words is refused where it arrives — a 422 naming the field over HTTP (never
a 500), a line and field named by ``engram ingest``, a tool error over MCP — and nothing of the
refused request is appended to the log."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import uuid
from pathlib import Path
from typing import Any

import asyncpg
import pytest
from fastapi.testclient import TestClient
from mcp import Client, StdioServerParameters

from engram.api import create_api
from engram.infra.settings import ApiSettings, DatabaseSettings, KafkaSettings, Settings
from engram.schemas.episodes import TurnAppended
from engram.schemas.log import decode_log_event
from engram.sealing.opening import open_sealer
from engram.service.tokens import create_token
from tests.e2e.test_api_ingest import _log_records
from tests.support.episodes import turn
from tests.support.isolation import REPO, Isolated

pytestmark = pytest.mark.e2e

NUL_TEXT = "I live in Os\u0000lo."


def _settings(isolated: Isolated, kafka: KafkaSettings) -> Settings:
    return Settings(
        kafka=kafka,
        database=DatabaseSettings(url=isolated.database_url),
        api=ApiSettings(),
        keys=isolated.keys(),
    )


def _client(isolated: Isolated, kafka: KafkaSettings) -> TestClient:
    return TestClient(create_api(_settings(isolated, kafka)), raise_server_exceptions=False)


def _send(
    client: TestClient, method: str, path: str, token: str, *, raw: bytes | None = None
) -> tuple[int, Any]:
    headers = {"Authorization": f"Bearer {token}", "Content-Type": "application/json"}
    with client:
        response = client.request(method, path, content=raw, headers=headers)
    return response.status_code, response.json()


def _turn(tenant: str, text: str, **message: Any) -> dict[str, Any]:
    body = turn(tenant, "ana", "p", "placeholder").model_dump(mode="json")
    body["messages"][0].update(content=text, **message)
    return body


def _ingest(isolated: Isolated, path: Path, **env: str) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        [sys.executable, "-m", "engram", "ingest", str(path)],
        cwd=REPO,
        env={**isolated.env(), **env},
        capture_output=True,
        timeout=120,
        check=False,
    )


def _named(answer: Any, *loc: object) -> bool:
    """Whether a 422's detail names the field whose location ends with ``loc``."""
    return any(tuple(e["loc"][-len(loc) :]) == loc for e in answer["detail"])


async def test_http_refuses_unstorable_text_in_every_field_naming_it(
    isolated: Isolated, kafka: KafkaSettings, pool: asyncpg.Pool
) -> None:
    t = isolated.tenant
    _, token = await create_token(pool, tenant=t, principal="ana")
    client = _client(isolated, kafka)

    def post(path: str, body: object) -> tuple[int, Any]:
        return _send(client, "POST", path, token, raw=json.dumps(body).encode())

    status, answer = await asyncio.to_thread(post, "/v1/turns", _turn(t, NUL_TEXT))
    assert status == 422 and _named(answer, "messages", 0, "content"), answer
    assert "U+0000" in json.dumps(answer)
    status, answer = await asyncio.to_thread(
        post, "/v1/turns", _turn(t, "Hello.", role="assistant", author="Bo\u0000t")
    )
    assert status == 422 and _named(answer, "messages", 0, "author"), answer
    remember = {
        "event_id": str(uuid.uuid4()),
        "project": "p",
        "session": "s",
        "occurred_at": "2026-01-01T00:00:00Z",
        "message": {"ordinal": 0, "role": "user", "content": NUL_TEXT},
    }
    status, answer = await asyncio.to_thread(post, "/v1/remember", remember)
    assert status == 422 and _named(answer, "message", "content"), answer
    correction = {"kind": "changed", "replacement": "Os\u0000lo"}
    status, answer = await asyncio.to_thread(
        post, f"/v1/beliefs/{uuid.uuid4()}/corrections", correction
    )
    assert status == 422 and _named(answer, "replacement"), answer
    status, answer = await asyncio.to_thread(_send, client, "GET", "/v1/search?q=Os%00lo", token)
    assert status == 422 and _named(answer, "q"), answer

    # A lone surrogate is valid JSON text (an escape) but no Unicode scalar value: a 422 that
    # names the field, never a 500 nor a dropped connection.
    lone = json.dumps(_turn(t, "Lisbon")).replace("Lisbon", "Lis\\ud800bon").encode()
    status, answer = await asyncio.to_thread(_send, client, "POST", "/v1/turns", token, raw=lone)
    assert status == 422 and _named(answer, "messages", 0, "content"), answer
    paired = json.dumps(_turn(t, "I like tea.")).replace("tea", "tea \\ud83c\\udf75").encode()
    status, answer = await asyncio.to_thread(_send, client, "POST", "/v1/turns", token, raw=paired)
    assert status == 202, answer  # a surrogate pair is one scalar value: an emoji is words
    [record] = await _log_records(kafka)
    # Sealed on the log (encryption is on by default): opened with the API's own keys.
    sealer = await open_sealer(_settings(isolated, kafka).keys, pool)
    event = await sealer.open(decode_log_event(record))
    assert isinstance(event, TurnAppended) and event.messages[0].content == "I like tea \U0001f375."


async def test_engram_ingest_names_the_line_and_field_and_appends_nothing(
    isolated: Isolated, kafka: KafkaSettings, tmp_path: Path
) -> None:
    t = isolated.tenant
    good = json.dumps(_turn(t, "I live in Lisbon."))
    path = tmp_path / "turns.jsonl"
    path.write_text(good + "\n" + json.dumps(_turn(t, NUL_TEXT)) + "\n")
    result = await asyncio.to_thread(_ingest, isolated, path)
    assert result.returncode == 2
    said = result.stderr.decode()
    assert "turns.jsonl:2" in said and "messages.0.content" in said and "U+0000" in said
    assert "nothing was appended" in said

    # The size the worker would dead-letter at is the ingest's limit too (HTTP's 413).
    path.write_text(good + "\n" + good + "\n" + json.dumps(_turn(t, "I like tea. " * 2000)))
    result = await asyncio.to_thread(_ingest, isolated, path, ENGRAM_KAFKA_MAX_EVENT_BYTES="4096")
    assert result.returncode == 2
    said = result.stderr.decode()
    assert "turns.jsonl:3" in said and "ENGRAM_KAFKA_MAX_EVENT_BYTES" in said
    assert await _log_records(kafka) == []


async def test_mcp_tools_refuse_unstorable_text_as_a_tool_error(
    isolated: Isolated, kafka: KafkaSettings, pool: asyncpg.Pool
) -> None:
    t = isolated.tenant
    _, token = await create_token(pool, tenant=t, principal="ana")
    env = {**isolated.env(partitions=1), "ENGRAM_MCP_TOKEN": token}
    server = StdioServerParameters(
        command=sys.executable, args=["-m", "engram", "mcp"], env=env, cwd=str(REPO)
    )
    async with Client(server) as agent:
        remembered = await agent.call_tool("remember", {"text": NUL_TEXT, "project": "p"})
        assert remembered.is_error and "U+0000" in str(remembered.content)
        recalled = await agent.call_tool("recall", {"query": "Os\u0000lo"})
        assert recalled.is_error and "U+0000" in str(recalled.content)
    assert await _log_records(kafka) == []
