"""The one client message text leaves through (:mod:`policies.endpoint_client`): built for an
allow-listed origin only, it follows no redirect and takes no proxy from the environment, and
the model extractor and the remote embedder both use it. Against a local OpenAI-compatible
server the test starts."""

from __future__ import annotations

import openai
import pytest
from pydantic import SecretStr

from engram.policies.endpoint import ModelEndpointNotAllowed
from engram.policies.endpoint_client import AllowlistedClient, allowlisted_client, answers_later
from tests.fakes.openai_server import FakeOpenAIServer, Reply

pytestmark = pytest.mark.model

KEY = SecretStr("sk-test")


def _client(server: FakeOpenAIServer) -> AllowlistedClient:
    return allowlisted_client(
        server.base_url, api_key=KEY, allowlist=[server.origin], timeout_s=5.0
    )


async def test_an_origin_off_the_allow_list_gets_no_client() -> None:
    async with FakeOpenAIServer() as server:
        with pytest.raises(ModelEndpointNotAllowed, match="ENGRAM_MODEL_ALLOWLIST"):
            allowlisted_client(
                server.base_url, api_key=KEY, allowlist=["http://127.0.0.1:1"], timeout_s=5.0
            )
        assert server.requests == []


async def test_a_redirect_to_another_origin_is_not_followed() -> None:
    async with FakeOpenAIServer() as elsewhere, FakeOpenAIServer() as server:
        server.enqueue(Reply.error(307, "", Location=f"{elsewhere.base_url}/embeddings"))
        bound = _client(server)
        with pytest.raises(openai.APIStatusError) as answered:
            await bound.client.embeddings.create(model="m", input=["secret plans"])
        await bound.client.close()
        assert answered.value.status_code == 307
        assert len(server.requests) == 1 and elsewhere.requests == []


async def test_a_proxy_from_the_environment_is_not_taken(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every proxy variable points at a closed port: a client that read them could not reach
    the server at all."""
    for name in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy"):
        monkeypatch.setenv(name, "http://127.0.0.1:1")
    monkeypatch.delenv("NO_PROXY", raising=False)
    monkeypatch.delenv("no_proxy", raising=False)
    async with FakeOpenAIServer() as server:
        server.enqueue(Reply.embeddings([[1.0, 0.0]]))
        bound = _client(server)
        answer = await bound.client.embeddings.create(model="m", input=["hello"])
        await bound.client.close()
    assert [row.embedding for row in answer.data] == [[1.0, 0.0]]


async def test_the_client_retries_nothing_itself() -> None:
    async with FakeOpenAIServer() as server:
        server.enqueue(Reply.error(503, "{}"), Reply.embeddings([[1.0]]))
        bound = _client(server)
        with pytest.raises(openai.InternalServerError):
            await bound.client.embeddings.create(model="m", input=["hello"])
        await bound.client.close()
        assert len(server.requests) == 1


@pytest.mark.parametrize(
    ("status", "later"),
    [(500, True), (503, True), (408, True), (429, True), (400, False), (401, False), (404, False)],
)
def test_a_server_error_a_timeout_and_a_rate_limit_may_answer_later(
    status: int, later: bool
) -> None:
    assert answers_later(status) is later
