"""The model-assisted extractor: an I/O edge that turns one message into proposals.

It calls ``/chat/completions`` on an OpenAI-compatible endpoint with the extraction prompt and
the message fenced by a random marker, reads at most ``max_response_bytes`` of the response, and
decodes the reply strictly (:mod:`engram.streams.model.reply`). One call is one attempt: retrying is
decided by the caller (:mod:`engram.streams.model.attempts`). Every failure is a
:class:`ModelExtractionError` with a kind, and its message never carries the message text, the
reply or the api key. Every attempt, answered or failed, leaves what an audit may keep: the
SHA-256 of the prompt sent and of the reply received, and the token counts the endpoint reported
— never the bodies themselves.

Message text leaves the process only for an allow-listed origin: the client is
:func:`policies.endpoint_client.allowlisted_client`'s (checked against ``ENGRAM_MODEL_ALLOWLIST``
when the extractor is built, no redirects followed, no proxy taken from the environment).
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import re
import secrets
from collections.abc import AsyncIterator, Callable, Sequence
from dataclasses import dataclass
from datetime import date
from typing import Literal

import httpx2
import openai
from openai.types.chat import (
    ChatCompletionMessageParam,
    ChatCompletionSystemMessageParam,
    ChatCompletionUserMessageParam,
)
from pydantic import BaseModel, ConfigDict, SecretStr, ValidationError

from engram.formation.gates import redact
from engram.formation.policy import FormationPolicy
from engram.formation.proposals import Proposal
from engram.formation.vocabulary import RELATIONS, Relation
from engram.infra.errors import EngramFailure
from engram.infra.settings import Settings
from engram.policies.endpoint import ModelConfigurationError
from engram.policies.endpoint_client import allowlisted_client, answers_later
from engram.policies.prompt import ExtractionPrompt, load_extraction_prompt
from engram.schemas.episodes import Message
from engram.streams.model.context import ContextMessage, context_digest
from engram.streams.model.prompt import new_fence, render_system_prompt, render_user_message
from engram.streams.model.reply import ModelReplyError, decode_envelope

DEFAULT_PII_KINDS = FormationPolicy().pii_kinds

ErrorKind = Literal["timeout", "http_status", "connection", "bad_reply", "oversized"]

_PROVIDER_CODE = re.compile(r"^[A-Za-z0-9_.-]{1,64}$")


class ModelExtractionError(EngramFailure):
    """One failed extraction call. ``kind`` says what failed; another call may succeed (a
    timeout, a lost connection, a reply that could not be read), unless the endpoint refused the
    request itself (:class:`ModelRequestRefused`).

    ``prompt_sha256`` and ``reply_sha256`` are the digests of what was sent and of the body
    received, when there was one: what the attempt's audit row keeps instead of the content.
    """

    code = "model_extraction_failed"
    retriable = True
    exit_code = 1

    def __init__(self, kind: ErrorKind, detail: str, *, status: int | None = None) -> None:
        super().__init__(f"model extraction failed ({kind}): {detail}")
        self.kind: ErrorKind = kind
        self.detail = detail
        self.status = status
        self.prompt_sha256: str | None = None
        self.reply_sha256: str | None = None


class ModelRequestRefused(ModelExtractionError):
    """The endpoint refused the request itself (a 4xx other than 408 and 429: a bad key, an
    unknown model, a request it will not take): another call is refused the same way."""

    code = "model_request_refused"
    retriable = False
    exit_code = 2


def http_status_error(detail: str, status: int) -> ModelExtractionError:
    """The failure for an endpoint that answered ``status``: retriable for 5xx, 408 and 429."""
    if answers_later(status):
        return ModelExtractionError("http_status", detail, status=status)
    return ModelRequestRefused("http_status", detail, status=status)


class TokenUsage(BaseModel):
    """The ``usage`` field of a chat completion: what the endpoint says the call cost."""

    model_config = ConfigDict(extra="ignore", frozen=True)
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    total_tokens: int | None = None


@dataclass(frozen=True, slots=True)
class ModelAnswer:
    """One answered attempt: the proposals, and the content-free facts an audit keeps."""

    proposals: list[Proposal]
    prompt_sha256: str
    reply_sha256: str
    usage: TokenUsage | None


class _ReplyMessage(BaseModel):
    model_config = ConfigDict(extra="ignore")
    content: str | None = None


class _ReplyChoice(BaseModel):
    model_config = ConfigDict(extra="ignore")
    message: _ReplyMessage
    finish_reason: str | None = None


class _ChatCompletion(BaseModel):
    """The part of a chat completion the extractor reads; the rest is ignored."""

    model_config = ConfigDict(extra="ignore")
    choices: list[_ReplyChoice]
    usage: TokenUsage | None = None


class ModelExtractor:
    """Proposes claims for one message at a time through an OpenAI-compatible endpoint."""

    def __init__(
        self,
        *,
        endpoint: str,
        model_name: str,
        api_key: SecretStr,
        allowlist: Sequence[str],
        timeout_s: float,
        max_response_bytes: int,
        prompt: ExtractionPrompt,
        relations: Sequence[Relation] = RELATIONS,
        token_hex: Callable[[int], str] = secrets.token_hex,
        pii_kinds: tuple[str, ...] = DEFAULT_PII_KINDS,
    ) -> None:
        bound = allowlisted_client(
            endpoint, api_key=api_key, allowlist=allowlist, timeout_s=timeout_s
        )
        self.origin = bound.origin
        self._client = bound.client
        self.model_name = model_name
        self.prompt_digest = prompt.digest
        self._prompt = prompt
        self._system = render_system_prompt(prompt, relations)
        self._timeout_s = timeout_s
        self._max_response_bytes = max_response_bytes
        self._token_hex = token_hex
        self._pii_kinds = pii_kinds

    @property
    def identity(self) -> tuple[str, str]:
        """(model name, endpoint origin): the policy's model fields, and with the prompt digest
        what a cached answer is keyed by. Never the api key."""
        return (self.model_name, self.origin)

    @property
    def extractor(self) -> str:
        """The name stamped on every proposal, candidate and refusal from this arm."""
        return f"model:{self.model_name}"

    @property
    def request_digest(self) -> str:
        """SHA-256 of what every request repeats: the prompt's bytes and the system prompt as
        rendered for this policy (the relations it offers). With :attr:`identity` and
        :meth:`input_digest`, the key of a stored answer."""
        fixed = f"{self.prompt_digest}\x1f{self._system}"
        return hashlib.sha256(fixed.encode()).hexdigest()

    def input_digest(
        self,
        message: Message,
        context: Sequence[ContextMessage] = (),
        occurred_on: date | None = None,
    ) -> str:
        """SHA-256 of the exact input the model decides on: the role and the message as it
        would be sent (redacted), the episode date and the context window. The fence's random
        marker is not part of it."""
        content = redact(message.content, pii_kinds=self._pii_kinds)
        day = occurred_on.isoformat() if occurred_on else ""
        window = context_digest(context) if context else ""
        key = f"{message.role.value}\x1f{content}\x1f{day}\x1f{window}"
        return hashlib.sha256(key.encode()).hexdigest()

    def __repr__(self) -> str:
        return f"ModelExtractor({self.model_name}@{self.origin}, prompt {self.prompt_digest[:12]})"

    async def propose(
        self,
        message: Message,
        context: Sequence[ContextMessage] = (),
        occurred_on: date | None = None,
    ) -> list[Proposal]:
        """The proposals the model makes for ``message``; raises :class:`ModelExtractionError`."""
        return (await self.answer(message, context, occurred_on)).proposals

    async def answer(
        self,
        message: Message,
        context: Sequence[ContextMessage] = (),
        occurred_on: date | None = None,
    ) -> ModelAnswer:
        """One attempt at ``message``, with the session's earlier messages as ``context`` and
        the episode's event-time date; raises :class:`ModelExtractionError`.

        Secrets and policy PII are redacted before the text leaves the process: they are never
        sent to a model (context arrives redacted already). A quote the model copies across a
        redaction cannot be located in the original message, so it is refused, which is what
        should happen to such a claim.
        """
        message = message.model_copy(
            update={"content": redact(message.content, pii_kinds=self._pii_kinds)}
        )
        fenced = "\n".join([message.content, *(m.content for m in context)])
        fence_id = new_fence(fenced, self._token_hex)
        system: ChatCompletionSystemMessageParam = {"role": "system", "content": self._system}
        user: ChatCompletionUserMessageParam = {
            "role": "user",
            "content": render_user_message(
                message, fence_id, context=context, occurred_on=occurred_on
            ),
        }
        sent: list[ChatCompletionMessageParam] = [system, user]
        prompt_sha256 = _sha256(json.dumps(sent, sort_keys=True).encode())
        body: bytes | None = None
        try:
            body = await self._complete(sent)
            text, usage = self._reply_text(body)
            proposals = self._decode(text)
        except ModelExtractionError as exc:
            exc.prompt_sha256 = prompt_sha256
            exc.reply_sha256 = _sha256(body) if body is not None else None
            raise
        return ModelAnswer(proposals, prompt_sha256, _sha256(body), usage)

    def _decode(self, text: str) -> list[Proposal]:
        try:
            return decode_envelope(text, extractor=self.extractor)
        except ModelReplyError as exc:
            raise ModelExtractionError("bad_reply", f"{self.origin}: {exc}") from None

    async def aclose(self) -> None:
        await self._client.close()

    async def __aenter__(self) -> ModelExtractor:
        return self

    async def __aexit__(self, *_: object) -> None:
        await self.aclose()

    async def _complete(self, messages: list[ChatCompletionMessageParam]) -> bytes:
        """The response body. The whole call, body included, is bounded by the timeout."""
        try:
            async with asyncio.timeout(self._timeout_s):
                body = await self._post(messages)
        except (TimeoutError, openai.APITimeoutError, httpx2.TimeoutException):
            raise self._timeout() from None
        except openai.APIStatusError as exc:
            raise self._status_error(exc) from None
        except (openai.APIConnectionError, httpx2.TransportError) as exc:
            detail = f"{self.origin}: {type(exc).__name__}"
            raise ModelExtractionError("connection", detail) from None
        except httpx2.HTTPError as exc:
            raise self._bad_reply(
                f"the response body is unreadable ({type(exc).__name__})"
            ) from None
        return body

    async def _post(self, messages: list[ChatCompletionMessageParam]) -> bytes:
        create = self._client.chat.completions.with_streaming_response.create
        async with create(
            model=self.model_name,
            messages=messages,
            temperature=self._prompt.temperature,
            response_format={"type": "json_object"},
        ) as response:
            return await self._read_capped(response.iter_bytes())

    async def _read_capped(self, chunks: AsyncIterator[bytes]) -> bytes:
        body = bytearray()
        async for chunk in chunks:
            body += chunk
            if len(body) > self._max_response_bytes:
                raise ModelExtractionError(
                    "oversized",
                    f"{self.origin}: response exceeds {self._max_response_bytes} bytes",
                )
        return bytes(body)

    def _reply_text(self, body: bytes) -> tuple[str, TokenUsage | None]:
        try:
            completion = _ChatCompletion.model_validate_json(body)
        except ValidationError:
            raise self._bad_reply("the response is not a chat completion") from None
        if not completion.choices:
            raise self._bad_reply("the completion has no choices")
        choice = completion.choices[0]
        if choice.finish_reason == "length":
            raise self._bad_reply("the reply was cut off (finish_reason length)")
        content = choice.message.content
        if content is None:
            raise self._bad_reply("the reply has no content")
        if len(content.encode()) > self._max_response_bytes:
            detail = f"{self.origin}: reply exceeds {self._max_response_bytes} bytes"
            raise ModelExtractionError("oversized", detail)
        return content, completion.usage

    def _timeout(self) -> ModelExtractionError:
        detail = f"{self.origin}: no complete reply within {self._timeout_s:g}s"
        return ModelExtractionError("timeout", detail)

    def _bad_reply(self, what: str) -> ModelExtractionError:
        return ModelExtractionError("bad_reply", f"{self.origin}: {what}")

    def _status_error(self, exc: openai.APIStatusError) -> ModelExtractionError:
        """Status and the provider's error code, never its body: a body may echo the message."""
        code = _provider_code(exc.body)
        suffix = f" ({code})" if code else ""
        detail = f"{self.origin} answered HTTP {exc.status_code}{suffix}"
        return http_status_error(detail, exc.status_code)


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _provider_code(body: object) -> str | None:
    """A short error code or type from an OpenAI-style error body, if it looks like one."""
    error = body.get("error", body) if isinstance(body, dict) else None
    if not isinstance(error, dict):
        return None
    for key in ("code", "type"):
        value = error.get(key)
        if isinstance(value, str) and _PROVIDER_CODE.match(value):
            return value
    return None


def build_model_extractor(
    settings: Settings,
    *,
    pii_kinds: tuple[str, ...] = DEFAULT_PII_KINDS,
    relations: Sequence[Relation] = RELATIONS,
) -> ModelExtractor:
    """The extractor the settings describe; its prompt is loaded and checked here, once.

    ``pii_kinds`` and ``relations`` are the policy's: what is redacted before a message leaves
    the process, and which relations the prompt offers the model.
    """
    model = settings.model
    if not model.endpoint:
        raise ModelConfigurationError("the model extractor needs ENGRAM_MODEL_ENDPOINT")
    if not model.name:
        raise ModelConfigurationError("the model extractor needs ENGRAM_MODEL_NAME")
    return ModelExtractor(
        endpoint=model.endpoint,
        model_name=model.name,
        api_key=model.api_key,
        allowlist=model.allowlist,
        timeout_s=model.timeout_s,
        max_response_bytes=model.max_response_bytes,
        prompt=load_extraction_prompt(settings.formation.prompt_path),
        relations=relations,
        pii_kinds=pii_kinds,
    )
