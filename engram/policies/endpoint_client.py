"""The one client a person's words leave the process through: OpenAI-compatible, for an
allow-listed origin only.

The model-assisted extractor (:mod:`engram.streams.model.extractor`) and the remote embedder
(:mod:`engram.projections.messages.embeddings.remote`) both send message text to an endpoint an
operator chose. What keeps that text where it is allowed to go is built here, once:

- the endpoint's origin (``scheme://host:port``, the default port made explicit:
  :func:`policies.endpoint.endpoint_origin`) must be on the allow-list, or nothing is built and
  nothing is sent;
- the HTTP client follows no redirect (a redirect could carry the text to another origin) and
  takes no proxy from the environment (an ``HTTPS_PROXY`` would route the text through a host
  nobody allow-listed);
- the ``openai`` client retries nothing itself: Engram's retries are :func:`infra.retry.retry`'s,
  bounded and recorded. :func:`answers_later` says which HTTP answers are worth another request.

Kept apart from :mod:`policies.endpoint`: this imports the ``openai`` client (~1 s at start-up),
so only the modules that build a model or a remote embedder import it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import openai
from pydantic import SecretStr

from engram.policies.endpoint import ModelEndpointNotAllowed, allowed_origins, endpoint_origin

_NOT_NOW = frozenset({408, 429})
"""4xx answers that say "not now" (a timeout, a rate limit) rather than "not this request"."""


@dataclass(frozen=True)
class AllowlistedClient:
    """An ``openai`` client bound to one allow-listed origin."""

    origin: str
    client: openai.AsyncOpenAI


def allowlisted_client(
    endpoint: str,
    *,
    api_key: SecretStr,
    allowlist: Sequence[str],
    timeout_s: float,
    setting: str = "ENGRAM_MODEL_ENDPOINT",
    refused: Callable[[str], Exception] = ModelEndpointNotAllowed,
) -> AllowlistedClient:
    """The client for ``endpoint``, or ``refused(origin)`` raised when its origin is not on
    ``allowlist``. ``setting`` names the endpoint's setting in a malformed URL's error."""
    origin = endpoint_origin(endpoint, setting=setting)
    if origin not in allowed_origins(allowlist):
        raise refused(origin)
    client = openai.AsyncOpenAI(
        base_url=endpoint,
        api_key=api_key.get_secret_value(),
        timeout=timeout_s,
        max_retries=0,
        http_client=openai.DefaultAsyncHttpxClient(
            timeout=timeout_s, follow_redirects=False, trust_env=False
        ),
    )
    return AllowlistedClient(origin, client)


def answers_later(status: int) -> bool:
    """Whether an endpoint that answered ``status`` may answer the same request later: a server
    error, a timeout (408) or a rate limit (429); any other refusal is for good."""
    return status >= 500 or status in _NOT_NOW
