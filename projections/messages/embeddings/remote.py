"""Embeddings from any OpenAI-compatible ``/v1/embeddings`` endpoint, through the ``openai``
client.

Message text leaves the process only for an allow-listed origin: the constructor refuses an
endpoint whose ``scheme://host:port`` is not on ``ENGRAM_EMBEDDING_ALLOWLIST``, with the same
normalisation and the same failure as the model-assisted extractor
(:mod:`policies.endpoint`, :class:`streams.model_extractor.ModelExtractor`). The client is built
the same way too: no redirects followed (a redirect could carry the text to another origin), no
proxy from the environment, no retries of its own. Retries are ours: a connection error, a
timeout, 429 or 5xx is retried after :class:`infra.backoff.Backoff`'s wait, up to
``max_attempts`` requests per batch, then :class:`~embeddings.embedder.EmbeddingUnavailable`; any
other refusal, or an answer that is not one vector of the right size per text, is
:class:`~embeddings.embedder.EmbeddingRefused` at once. The API key is a ``SecretStr`` and is
never logged or repr'd.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence

import numpy as np
import openai
from pydantic import BaseModel, ConfigDict, SecretStr, ValidationError

from engram.infra.backoff import Backoff
from engram.policies.endpoint import ModelEndpointNotAllowed, allowed_origins, endpoint_origin
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
_RETRIED = (
    openai.APIConnectionError,  # includes APITimeoutError
    openai.RateLimitError,
    openai.InternalServerError,
)


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
        self.origin = endpoint_origin(endpoint, setting=ENDPOINT_SETTING)
        if self.origin not in allowed_origins(allowlist):
            raise EmbeddingEndpointNotAllowed(self.origin)
        if batch_size < 1 or max_attempts < 1 or dimensions < 1:
            raise ValueError("batch_size, max_attempts and dimensions must be at least 1")
        if recipe not in RECIPES:
            raise UnknownRecipe(f"unknown text recipe {recipe!r}; known: {sorted(RECIPES)}")
        self._recipe = RECIPES[recipe]
        self._model = EmbeddingModel(model, dimensions, recipe)
        self._batch_size = batch_size
        self._max_attempts = max_attempts
        self._backoff = backoff
        self._sleep = sleep
        self._client = openai.AsyncOpenAI(
            base_url=endpoint,
            api_key=api_key.get_secret_value(),
            timeout=timeout_s,
            max_retries=0,
            http_client=openai.DefaultAsyncHttpxClient(
                timeout=timeout_s, follow_redirects=False, trust_env=False
            ),
        )

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
        failures = 0
        while True:
            try:
                raw = await self._client.embeddings.with_raw_response.create(
                    model=self._model.name,
                    input=texts,
                    dimensions=self._model.dimensions,
                    encoding_format="float",
                    extra_body=extra,
                )
            except _RETRIED as error:
                failures += 1
                if failures >= self._max_attempts:
                    raise EmbeddingUnavailable(
                        f"embeddings endpoint {self.origin} failed {failures} times: "
                        f"{type(error).__name__}"
                    ) from error
                await self._sleep(self._backoff.after(failures))
                continue
            except openai.APIStatusError as error:
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
