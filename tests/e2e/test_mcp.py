"""``engram mcp`` as an agent's MCP client sees it, through the SDK's own client: over stdio
(the server a subprocess with the principal's token in its environment) it recalls with quotes,
remembers and corrects, each change formed by a real worker on real Kafka and PostgreSQL; over
streamable HTTP each request's bearer token decides whose memory it reaches; without a valid
token nothing is served."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import asyncpg
import httpx
import pytest
from mcp import Client, StdioServerParameters
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client
from mcp.types import CallToolResult

from engram.infra.settings import KafkaSettings
from engram.ingest.producer import EpisodeProducer
from engram.ingest.topics import ensure_topics
from engram.projections.messages.embeddings import store as embedding_store
from engram.schemas.api import LogPosition
from engram.service.tokens import create_token, revoke_token
from engram.watermarks.waiting import wait_for_watermarks
from tests.support.conditions import wait_until
from tests.support.episodes import turn
from tests.support.http import free_port
from tests.support.indexing import indexed_to_the_end
from tests.support.isolation import REPO, Isolated, running_engram, running_worker
from tests.support.projecting import seed_two_principals

pytestmark = pytest.mark.e2e

WAIT_S = 90


def _answer(result: CallToolResult) -> dict[str, Any]:
    assert not result.is_error, result.content
    content = result.structured_content
    assert isinstance(content, dict), result.content
    return content


def _stdio(isolated: Isolated, token: str | None) -> StdioServerParameters:
    env = {**isolated.env(partitions=1), "ENGRAM_MCP_TOKEN": token or ""}
    return StdioServerParameters(
        command=sys.executable, args=["-m", "engram", "mcp"], env=env, cwd=str(REPO)
    )


async def _formed(pool: asyncpg.Pool, tenant: str, appended: dict[str, Any]) -> None:
    position = LogPosition.model_validate(appended)
    assert position.tenant == tenant, appended
    await wait_for_watermarks(pool, [position], timeout_s=WAIT_S)


async def test_over_stdio_an_agent_recalls_with_quotes_remembers_and_corrects(
    isolated: Isolated, pool: asyncpg.Pool, tmp_path: Path
) -> None:
    t = isolated.tenant
    kafka = isolated.kafka(partitions=1)
    await ensure_topics(kafka)
    record, token = await create_token(pool, tenant=t, principal="ana")
    with running_worker(isolated, log_path=tmp_path / "worker.log", env=isolated.env(partitions=1)):
        async with EpisodeProducer(kafka) as producer:
            [where] = await producer.publish_many([turn(t, "ana", "p", "I live in Lisbon.")])
        await wait_for_watermarks(pool, [where], timeout_s=WAIT_S)
        await indexed_to_the_end(kafka, pool, timeout_s=WAIT_S)

        async def embedding() -> bool:  # the worker's embedder child activates its generation
            async with pool.acquire() as conn:
                return await embedding_store.active(conn) is not None

        await wait_until(embedding, timeout_s=WAIT_S, what="the vectors' generation is active")

        async with Client(_stdio(isolated, token)) as agent:
            tools = {tool.name for tool in (await agent.list_tools()).tools}
            assert tools == {"recall", "remember", "correct", "delete"}

            recalled = _answer(await agent.call_tool("recall", {"query": "where do I live"}))
            [lisbon] = recalled["hits"]
            assert lisbon["object"] == "Lisbon"
            assert lisbon["readable"] == "ana lives in Lisbon"  # words, never "speaker lives_in"
            assert [q["quote"] for q in lisbon["quotes"]] == ["I live in Lisbon"]
            [said] = recalled["messages"]  # then the message itself, with where it is
            assert (said["content"], said["own_words"]) == ("I live in Lisbon.", True)
            assert (said["partition"], said["offset"]) == (0, where.offset)
            asked = {"query": "yesterday", "semantic": False, "asked_at": "2026-01-02T12:00:00Z"}
            dated = _answer(await agent.call_tool("recall", asked))
            assert [m["content"] for m in dated["messages"]] == ["I live in Lisbon."], dated

            remembered = _answer(
                await agent.call_tool(
                    "remember", {"text": "Remember that I prefer green tea.", "project": "p"}
                )
            )
            await _formed(pool, t, remembered)
            [tea] = _answer(await agent.call_tool("recall", {"query": "tea"}))["hits"]
            assert "green tea" in tea["object"]
            assert [q["quote"] for q in tea["quotes"]] == ["Remember that I prefer green tea"]
            first = _answer(await agent.call_tool("recall", {"query": "Lisbon or tea", "limit": 1}))
            assert len(first["hits"]) == 1 and first["next_cursor"]
            rest = _answer(
                await agent.call_tool(
                    "recall", {"query": "Lisbon or tea", "cursor": first["next_cursor"]}
                )
            )
            assert rest["next_cursor"] is None
            paged = {h["object"] for h in first["hits"] + rest["hits"]}
            assert paged == {"Lisbon", tea["object"]}

            corrected = _answer(
                await agent.call_tool(
                    "correct",
                    {
                        "belief_id": lisbon["belief_id"],
                        "kind": "changed",
                        "replacement": "Porto",
                    },
                )
            )
            await _formed(pool, t, corrected)
            now = _answer(await agent.call_tool("recall", {"query": "Lisbon or Porto"}))["hits"]
            assert [h["object"] for h in now] == ["Porto"]

            deleted = _answer(await agent.call_tool("delete", {"belief_id": tea["belief_id"]}))
            assert deleted["applied"], deleted
            receipt = deleted["receipt"]
            assert receipt["kind"] == "belief.deleted" and not receipt["already"]
            assert {r["table"]: r["rows"] for r in receipt["erased"]}["belief"] >= 1
            # The turn that said it stays in the log, sealed under ana's key: the receipt says so.
            assert receipt["log"]["state"] == "sealed", receipt["log"]
            assert "until the principal is forgotten" in receipt["log"]["says"]
            assert _answer(await agent.call_tool("recall", {"query": "tea"}))["hits"] == []

            words_only = {"query": "the of and", "semantic": False}
            refused = await agent.call_tool("recall", words_only)
            assert refused.is_error and "no words to search for" in str(refused.content)
            by_meaning = await agent.call_tool("recall", {"query": "the of and"})
            assert not by_meaning.is_error, "only stop words: answered by the semantic list"
            assert await revoke_token(pool, record.token_id)
            revoked = await agent.call_tool("recall", {"query": "Porto"})
            assert revoked.is_error and "revoked" in str(revoked.content)


@pytest.mark.parametrize("token", [None, "engram_not-a-token", "revoked", "operator"])
async def test_over_stdio_no_usable_token_means_no_server(
    isolated: Isolated, pool: asyncpg.Pool, token: str | None
) -> None:
    t = isolated.tenant
    if token == "revoked":
        record, token = await create_token(pool, tenant=t, principal="ana")
        await revoke_token(pool, record.token_id)
    elif token == "operator":
        _, token = await create_token(pool, tenant=t, principal=None)
    refused = subprocess.run(
        [sys.executable, "-m", "engram", "mcp"],
        cwd=REPO,
        env={**isolated.env(), "ENGRAM_MCP_TOKEN": token or ""},
        input=b"",
        capture_output=True,
        timeout=120,
        check=False,
    )
    assert refused.returncode == 2, refused.stderr.decode()
    assert refused.stdout == b"", "nothing on the protocol channel"
    said = " ".join(refused.stderr.decode().split())
    assert "refused" in said and "engram tokens create" in said


async def test_over_http_each_request_reaches_only_its_tokens_principal(
    isolated: Isolated, kafka: KafkaSettings, pool: asyncpg.Pool, tmp_path: Path
) -> None:
    t = isolated.tenant
    await seed_two_principals(kafka, pool, t)
    tokens = {who: (await create_token(pool, tenant=t, principal=who))[1] for who in ("ana", "bo")}
    _, operator = await create_token(pool, tenant=t, principal=None)
    port = free_port()
    url = f"http://127.0.0.1:{port}/mcp"
    env = {**isolated.env(), "ENGRAM_MCP_PORT": str(port)}
    argv = ("mcp", "--transport", "http")
    with running_engram(isolated, *argv, log_path=tmp_path / "mcp.log", env=env):
        await _until_listening(url)
        hello = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {}}
        async with httpx.AsyncClient() as http:
            for token, status in ((None, 401), ("engram_nope", 401), (operator, 403)):
                headers = {"Authorization": f"Bearer {token}"} if token else {}
                answer = await http.post(url, json=hello, headers=headers)
                assert answer.status_code == status, answer.text
                assert "engram tokens create" in answer.json()["detail"]

        for who, theirs, others in (("ana", "Lisbon", "Cork"), ("bo", "Cork", "Lisbon")):
            headers = {"Authorization": f"Bearer {tokens[who]}"}
            transport = streamable_http_client(url, http_client=create_mcp_http_client(headers))
            async with Client(transport) as agent:
                found = _answer(await agent.call_tool("recall", {"query": f"{theirs} or {others}"}))
                assert [h["object"] for h in found["hits"]] == [theirs]
                assert others not in json.dumps(found)
    log = (tmp_path / "mcp.log").read_text(errors="replace")
    assert "Traceback" not in log, log[-2000:]


async def _until_listening(url: str) -> None:
    """The server answers (401, with no token) once it has bound its port."""

    async def answering() -> bool:
        try:
            async with httpx.AsyncClient() as http:
                await http.post(url, json={})
        except httpx.TransportError:
            return False
        return True

    await wait_until(answering, timeout_s=60, what=f"{url} answering", poll_s=0.1)
