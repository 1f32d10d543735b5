"""Embeddings from any OpenAI-compatible ``/v1/embeddings`` endpoint, through the ``openai``
client.

Message text leaves the process only for an allow-listed origin, through the one client built
for that (:func:`policies.endpoint_client.allowlisted_client`, as the model-assisted extractor's
is): an endpoint whose ``scheme://host:port`` is not on ``ENGRAM_EMBEDDING_ALLOWLIST`` is
refused when the embedder is built, no redirects are followed, no proxy is taken from the
environment, and the client retries nothing itself. Retries are ours
(:func:`infra.retry.retry`): a connection error, a timeout, 408, 429 or 5xx is retried after
:class:`infra.backoff.Backoff`'s wait, up to ``max_attempts`` requests per batch, then
:class:`~engram.projections.messages.embeddings.embedder.EmbeddingUnavailable`; any other refusal, or an answer that is not
one vector of the right size per text, is :class:`~engram.projections.messages.embeddings.embedder.EmbeddingRefused` at once.
The API key is a ``SecretStr`` and is never logged or repr'd.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence

import numpy as np
import openai
from pydantic import BaseModel, ConfigDict, SecretStr, ValidationError

from engram.infra.backoff import Backoff
from engram.infra.retry import retry
from engram.policies.endpoint import ModelEndpointNotAllowed
from engram.policies.endpoint_client import allowlisted_client, answers_later
from engram.projections.messages.embeddings.embedder import (
    EmbeddingModel,
    EmbeddingRefused,
    EmbeddingUnavailable,
    InputType,
    Vectors,
    unit_rows,
)
from engram.projections.messages.embeddings.generation import (
    DEFAULT_RECIPE,
    RECIPES,
    UnknownRecipe,
)

ENDPOINT_SETTING = "ENGRAM_EMBEDDING_ENDPOINT"


class _Row(BaseModel):
    model_config = ConfigDict(extra="ignore")
    index: int
    embedding: list[float]


class _Answer(BaseModel):
    """The part of an embeddings response the embedder reads; the rest is ignored."""

    model_config = ConfigDict(extra="ignore")
    data: list[_Row]


class EmbeddingEndpointNotAllowed(ModelEndpointNotAllowed):
    """The embeddings endpoint's origin is not allow-listed: message text may not go there."""

    code = "embedding_endpoint_not_allowed"

    def __init__(self, origin: str) -> None:
        super().__init__(origin)
        self.args = (
            f"embeddings endpoint origin {origin} is not in ENGRAM_EMBEDDING_ALLOWLIST; message "
            "text is only sent to allow-listed origins",
        )


class OpenAIEmbedder:
    """Vectors from an OpenAI-compatible endpoint, ``batch_size`` texts per request."""

    def __init__(
        self,
        *,
        endpoint: str,
        model: str,
        dimensions: int,
        api_key: SecretStr,
        allowlist: Sequence[str],
        batch_size: int = 64,
        timeout_s: float = 30.0,
        max_attempts: int = 3,
        backoff: Backoff = Backoff(1.0),
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
        recipe: str = DEFAULT_RECIPE,
    ) -> None:
        if batch_size < 1 or max_attempts < 1 or dimensions < 1:
            raise ValueError("batch_size, max_attempts and dimensions must be at least 1")
        if recipe not in RECIPES:
            raise UnknownRecipe(f"unknown text recipe {recipe!r}; known: {sorted(RECIPES)}")
        self._recipe = RECIPES[recipe]
        bound = allowlisted_client(
            endpoint,
            api_key=api_key,
            allowlist=allowlist,
            timeout_s=timeout_s,
            setting=ENDPOINT_SETTING,
            refused=EmbeddingEndpointNotAllowed,
        )
        self.origin = bound.origin
        self._client = bound.client
        self._model = EmbeddingModel(model, dimensions, recipe)
        self._batch_size = batch_size
        self._max_attempts = max_attempts
        self._backoff = backoff
        self._sleep = sleep

    @property
    def model(self) -> EmbeddingModel:
        return self._model

    async def embed(self, texts: Sequence[str], input_type: InputType = "document") -> Vectors:
        """``texts`` embedded as ``input_type`` the model's recipe's way: prefixes written into
        the text (``e5-query-passage-v1``), the request's ``input_type`` (``input-type-v1``),
        or neither (a symmetric recipe)."""
        size = self._model.dimensions
        parts = [np.zeros((0, size), dtype=np.float32)]
        recipe = self._recipe
        extra: dict[str, object] | None = None
        if recipe.prefixes is not None:
            prefix = recipe.prefixes[0 if input_type == "query" else 1]
            texts = [prefix + text for text in texts]
        elif recipe.asymmetric:
            extra = {"input_type": input_type}
        for start in range(0, len(texts), self._batch_size):
            batch = list(texts[start : start + self._batch_size])
            parts.append(await self._batch(batch, extra))
        return np.vstack(parts)

    async def _batch(self, texts: list[str], extra: dict[str, object] | None) -> Vectors:
        """One request's vectors, retried (:func:`infra.retry.retry`) while the endpoint is
        unavailable, up to ``max_attempts`` requests."""
        tries = 0

        async def request() -> Vectors:
            nonlocal tries
            tries += 1
            return await self._request(texts, extra)

        try:
            return await retry(
                request, backoff=self._backoff, attempts=self._max_attempts, sleep=self._sleep
            )
        except EmbeddingUnavailable as error:
            raise EmbeddingUnavailable(
                f"embeddings endpoint {self.origin} failed {tries} times: {error}"
            ) from error.__cause__

    async def _request(self, texts: list[str], extra: dict[str, object] | None) -> Vectors:
        """One request; :class:`EmbeddingUnavailable` when another may succeed (connection
        error, timeout, 429, 5xx), :class:`EmbeddingRefused` when it will not."""
        try:
            raw = await self._client.embeddings.with_raw_response.create(
                model=self._model.name,
                input=texts,
                dimensions=self._model.dimensions,
                encoding_format="float",
                extra_body=extra,
            )
        except openai.APIConnectionError as error:  # includes APITimeoutError
            raise EmbeddingUnavailable(type(error).__name__) from error
        except openai.APIStatusError as error:
            if answers_later(error.status_code):
                raise EmbeddingUnavailable(f"HTTP {error.status_code}") from error
            raise EmbeddingRefused(
                f"embeddings endpoint {self.origin} refused the request with "
                f"HTTP {error.status_code}"
            ) from error
        except openai.APIError as error:  # an answer the client could not read
            raise EmbeddingRefused(
                f"embeddings endpoint {self.origin} answered something unreadable: "
                f"{type(error).__name__}"
            ) from error
        return self._vectors(raw.http_response.content, len(texts))

    def _vectors(self, content: bytes, count: int) -> Vectors:
        # Read with a model of our own: the client builds its response objects without
        # validating them, so a malformed answer would surface as an arbitrary TypeError.
        try:
            answer = _Answer.model_validate_json(content)
        except ValidationError as error:
            raise EmbeddingRefused(
                f"embeddings endpoint {self.origin} answered something unreadable "
                f"({error.error_count()} problems)"
            ) from None
        rows = sorted(answer.data, key=lambda item: item.index)
        if [row.index for row in rows] != list(range(count)):
            raise EmbeddingRefused(
                f"embeddings endpoint {self.origin} answered {len(rows)} vectors for {count} "
                "texts (or out of order)"
            )
        return unit_rows(
            np.array([row.embedding for row in rows], dtype=np.float32).reshape(count, -1),
            dimensions=self._model.dimensions,
        )

    def __repr__(self) -> str:
        return f"OpenAIEmbedder({self._model.name}@{self.origin}, {self._model.dimensions})"
