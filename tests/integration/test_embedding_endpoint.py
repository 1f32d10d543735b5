"""The OpenAI-compatible embedder against a real local HTTP server speaking ``/v1/embeddings``:
the real ``openai`` client, batching, order, the allow-list, retries and refusals."""

from __future__ import annotations

import json
from typing import Any

import numpy as np
import pytest
from pydantic import SecretStr

from engram.infra.backoff import Backoff
from engram.infra.settings import EmbeddingSettings
from engram.policies.endpoint import ModelConfigurationError, ModelEndpointNotAllowed
from engram.projections.messages.embeddings.embedder import EmbeddingRefused, EmbeddingUnavailable
from engram.projections.messages.embeddings.remote import (
    EmbeddingEndpointNotAllowed,
    OpenAIEmbedder,
)
from engram.projections.messages.embeddings.wiring import embedder_from_settings
from tests.fakes.openai_server import FakeOpenAIServer, Reply

pytestmark = pytest.mark.model

API_KEY = "sk-embed-0123456789SECRET"
MODEL = "embed-test"


def vector_of(text: str) -> list[float]:
    """A deterministic 4-dimensional vector a test can predict: text length and a marker."""
    return [float(len(text)), 1.0, 0.0, 2.0 if "dog" in text else 0.0]


def answer(body: Any) -> Reply:
    return Reply.embeddings([vector_of(text) for text in body["input"]])


class Sleeps:
    def __init__(self) -> None:
        self.waits: list[float] = []

    async def __call__(self, seconds: float) -> None:
        self.waits.append(seconds)


def embedder_for(server: FakeOpenAIServer, **overrides: Any) -> OpenAIEmbedder:
    options: dict[str, Any] = {
        "endpoint": server.base_url,
        "model": MODEL,
        "dimensions": 4,
        "api_key": SecretStr(API_KEY),
        "allowlist": [server.origin],
        "batch_size": 2,
        "timeout_s": 5.0,
        "max_attempts": 3,
        "backoff": Backoff(0.25),
    }
    options.update(overrides)
    return OpenAIEmbedder(**options)


async def test_texts_are_sent_in_batches_and_come_back_in_order_as_unit_vectors(
    openai_server: FakeOpenAIServer,
) -> None:
    openai_server.script = answer
    texts = ["a cat", "the dog barked", "xyz", "hello", "a dog"]
    vectors = await embedder_for(openai_server).embed(texts)
    assert [r.body["input"] for r in openai_server.requests] == [
        ["a cat", "the dog barked"],
        ["xyz", "hello"],
        ["a dog"],
    ]
    assert all(r.path == "/v1/embeddings" for r in openai_server.requests)
    sent = openai_server.requests[0]
    assert sent.body["model"] == MODEL and sent.body["dimensions"] == 4
    assert sent.body["encoding_format"] == "float"
    assert sent.headers["Authorization"] == f"Bearer {API_KEY}"
    expected = np.array([vector_of(t) for t in texts], dtype=np.float32)
    expected /= np.linalg.norm(expected, axis=1, keepdims=True)
    assert vectors.shape == (5, 4) and np.allclose(vectors, expected)


async def test_an_answer_out_of_index_order_is_put_back_in_order(
    openai_server: FakeOpenAIServer,
) -> None:
    openai_server.enqueue(
        Reply(
            body=json.dumps(
                {
                    "object": "list",
                    "model": MODEL,
                    "data": [
                        {"object": "embedding", "index": 1, "embedding": [0, 1, 0, 0]},
                        {"object": "embedding", "index": 0, "embedding": [1, 0, 0, 0]},
                    ],
                    "usage": {"prompt_tokens": 0, "total_tokens": 0},
                }
            )
        )
    )
    vectors = await embedder_for(openai_server).embed(["first", "second"])
    assert np.array_equal(vectors, np.eye(4, dtype=np.float32)[:2])


async def test_an_origin_off_the_allow_list_is_refused_before_any_text_is_sent(
    openai_server: FakeOpenAIServer,
) -> None:
    with pytest.raises(EmbeddingEndpointNotAllowed, match="ENGRAM_EMBEDDING_ALLOWLIST") as refused:
        embedder_for(openai_server, allowlist=["http://127.0.0.1:1"])
    assert isinstance(refused.value, ModelEndpointNotAllowed)
    assert refused.value.code == "embedding_endpoint_not_allowed"
    with pytest.raises(EmbeddingEndpointNotAllowed):
        embedder_for(openai_server, allowlist=[])
    with pytest.raises(ModelConfigurationError, match="ENGRAM_EMBEDDING_ENDPOINT"):
        embedder_for(openai_server, endpoint="ftp://127.0.0.1/v1")
    assert openai_server.requests == []


async def test_outages_are_retried_on_the_back_off_schedule_then_succeed(
    openai_server: FakeOpenAIServer,
) -> None:
    sleeps = Sleeps()
    openai_server.enqueue(
        Reply.error(503, '{"error": {"message": "busy"}}'),
        Reply.error(429, '{"error": {"message": "slow down"}}'),
        Reply.embeddings([[1, 0, 0, 0]]),
    )
    vectors = await embedder_for(openai_server, sleep=sleeps).embed(["one"])
    assert np.array_equal(vectors, [[1, 0, 0, 0]])
    assert len(openai_server.requests) == 3
    assert sleeps.waits == [0.25, 0.5]


async def test_a_batch_that_keeps_failing_is_unavailable_after_max_attempts(
    openai_server: FakeOpenAIServer,
) -> None:
    sleeps = Sleeps()
    openai_server.enqueue(*[Reply.error(500, "{}")] * 5)
    with pytest.raises(EmbeddingUnavailable, match="failed 3 times") as failed:
        await embedder_for(openai_server, sleep=sleeps).embed(["one"])
    assert failed.value.retriable
    assert len(openai_server.requests) == 3 and sleeps.waits == [0.25, 0.5]
    assert API_KEY not in str(failed.value)


async def test_a_timeout_is_an_outage_too(openai_server: FakeOpenAIServer) -> None:
    openai_server.enqueue(Reply.hanging(), Reply.embeddings([[0, 0, 1, 0]]))
    sleeps = Sleeps()
    vectors = await embedder_for(openai_server, timeout_s=0.3, sleep=sleeps).embed(["one"])
    assert np.array_equal(vectors, [[0, 0, 1, 0]]) and sleeps.waits == [0.25]


async def test_a_client_error_is_refused_at_once(openai_server: FakeOpenAIServer) -> None:
    openai_server.enqueue(Reply.error(400, '{"error": {"message": "bad dimensions"}}'))
    with pytest.raises(EmbeddingRefused, match="HTTP 400") as refused:
        await embedder_for(openai_server).embed(["one"])
    assert not refused.value.retriable
    assert len(openai_server.requests) == 1


@pytest.mark.parametrize(
    ("reply", "message"),
    [
        (Reply.embeddings([[1, 0, 0], [0, 1, 0]]), "size 4"),
        (Reply.embeddings([[1, 0, 0, 0]]), "1 vectors for 2 texts"),
        (Reply(body='{"data": "nonsense"}'), "unreadable"),
    ],
)
async def test_an_answer_that_is_not_one_vector_of_the_size_per_text_is_refused(
    openai_server: FakeOpenAIServer, reply: Reply, message: str
) -> None:
    openai_server.enqueue(reply)
    with pytest.raises(EmbeddingRefused, match=message):
        await embedder_for(openai_server).embed(["one", "two"])


async def test_the_api_key_is_never_in_the_repr_or_the_settings_dump(
    openai_server: FakeOpenAIServer,
) -> None:
    settings = EmbeddingSettings(
        provider="openai",
        endpoint=openai_server.base_url,
        model=MODEL,
        dimensions=4,
        api_key=SecretStr(API_KEY),
        allowlist=[openai_server.origin],
    )
    embedder = embedder_from_settings(settings)
    assert API_KEY not in repr(embedder) and API_KEY not in repr(settings)
    assert API_KEY not in str(settings.model_dump())
    openai_server.script = answer
    assert (await embedder.embed(["a dog"])).shape == (1, 4)


def test_the_openai_provider_needs_an_endpoint_and_a_model() -> None:
    with pytest.raises(ModelConfigurationError, match="ENGRAM_EMBEDDING_ENDPOINT"):
        embedder_from_settings(EmbeddingSettings(provider="openai"))


def test_the_local_provider_is_the_default_and_multilingual_e5_its_default_model() -> None:
    embedder = embedder_from_settings(EmbeddingSettings())
    assert (embedder.model.name, embedder.model.dimensions) == ("multilingual-e5-small-q4", 384)
    assert embedder.model.recipe == "e5-query-passage-v1"
    light = embedder_from_settings(EmbeddingSettings(local_model="wordllama", dimensions=128))
    assert light.model.name == "wordllama-l2_supercat" and light.model.dimensions == 128
    with pytest.raises(ModelConfigurationError, match="makes 384"):
        embedder_from_settings(EmbeddingSettings(dimensions=256))


async def test_an_asymmetric_recipe_tells_questions_from_messages_its_way(
    openai_server: FakeOpenAIServer,
) -> None:
    openai_server.script = answer
    prefixed = embedder_for(openai_server, recipe="e5-query-passage-v1")
    await prefixed.embed(["a dog?"], "query")
    await prefixed.embed(["a dog"], "document")
    field = embedder_for(openai_server, recipe="input-type-v1")
    await field.embed(["a dog?"], "query")
    await field.embed(["a dog"])
    plain = embedder_for(openai_server, recipe="plain-v1")
    await plain.embed(["a dog?"], "query")
    sent = [(r.body["input"], r.body.get("input_type")) for r in openai_server.requests]
    assert sent == [
        (["query: a dog?"], None),
        (["passage: a dog"], None),
        (["a dog?"], "query"),
        (["a dog"], "document"),
        (["a dog?"], None),
    ]
    assert prefixed.model.recipe == "e5-query-passage-v1"
