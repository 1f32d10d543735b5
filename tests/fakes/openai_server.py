"""A local OpenAI-compatible HTTP server with scripted replies, for tests and benchmarks.

It is a real HTTP server (aiohttp, on 127.0.0.1 and a free port) that speaks
``POST /v1/chat/completions`` and ``POST /v1/embeddings``. What it answers comes from a script: a function of the request
body, or else a queue of replies. A reply can be content text, a delay, an HTTP status and body,
or a hang that lasts until the client gives up. Every request is recorded in ``requests`` so a
test can assert what was sent. Handlers run concurrently on the event loop: 64 requests that each
wait 500 ms take about 500 ms together, not 32 s.

    async with FakeOpenAIServer(script=lambda body: Reply.text('{"claims": []}')) as server:
        ...  # point the client at server.base_url; server.origin goes in the allow-list
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import json
from collections import deque
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from aiohttp import web

HANG_LIMIT_S = 300.0
"""A hanging reply ends when the server stops, or after this long, whichever is first."""


@dataclass(frozen=True)
class Reply:
    """One scripted answer. ``content`` becomes the assistant message of a chat completion;
    ``body`` (with ``status``) is sent as is instead; ``hang`` never answers."""

    content: str | None = None
    delay_s: float = 0.0
    status: int = 200
    body: str | None = None
    hang: bool = False
    finish_reason: str = "stop"
    headers: Mapping[str, str] = field(default_factory=dict)
    usage: Mapping[str, int] | None = None
    """The completion's ``usage`` field; zeros when not given."""
    vectors: tuple[tuple[float, ...], ...] | None = None
    """An embeddings answer: one vector per input, in order (``data[i].index == i``)."""

    @classmethod
    def text(cls, content: str, *, delay_s: float = 0.0) -> Reply:
        return cls(content=content, delay_s=delay_s)

    @classmethod
    def claims(cls, *claims: Mapping[str, Any], delay_s: float = 0.0) -> Reply:
        return cls(content=json.dumps({"claims": list(claims)}), delay_s=delay_s)

    @classmethod
    def error(cls, status: int, body: str = "", **headers: str) -> Reply:
        return cls(status=status, body=body, headers=headers)

    @classmethod
    def embeddings(cls, vectors: Sequence[Sequence[float]], *, delay_s: float = 0.0) -> Reply:
        return cls(vectors=tuple(tuple(v) for v in vectors), delay_s=delay_s)

    @classmethod
    def hanging(cls) -> Reply:
        return cls(hang=True)


@dataclass(frozen=True)
class RecordedRequest:
    """What a client sent: path, headers and the decoded JSON body."""

    path: str
    headers: Mapping[str, str]
    body: Any

    @property
    def messages(self) -> list[dict[str, Any]]:
        messages: list[dict[str, Any]] = self.body["messages"]
        return messages

    def message(self, role: str) -> str:
        """The content of the first message with ``role`` (``system`` or ``user``)."""
        return next(str(m["content"]) for m in self.messages if m["role"] == role)


Script = Callable[[Any], Reply | Awaitable[Reply]]


def completion(
    content: str | None,
    *,
    model: str,
    finish_reason: str = "stop",
    usage: Mapping[str, int] | None = None,
) -> dict[str, Any]:
    """A minimal chat completion carrying ``content`` as the assistant's message."""
    return {
        "id": "chatcmpl-fake",
        "object": "chat.completion",
        "created": 0,
        "model": model,
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": content},
                "finish_reason": finish_reason,
            }
        ],
        "usage": dict(usage or {"prompt_tokens": 0, "completion_tokens": 0, "total_tokens": 0}),
    }


class FakeOpenAIServer:
    """Serve scripted chat completions on 127.0.0.1; use as an async context manager."""

    def __init__(self, script: Script | None = None) -> None:
        self.script = script
        self.replies: deque[Reply] = deque()
        self.requests: list[RecordedRequest] = []
        self.in_flight = 0
        self.max_in_flight = 0
        self._stopping = asyncio.Event()
        self._runner: web.AppRunner | None = None
        self._port: int | None = None

    @property
    def origin(self) -> str:
        if self._port is None:
            raise RuntimeError("the fake OpenAI server is not started")
        return f"http://127.0.0.1:{self._port}"

    @property
    def base_url(self) -> str:
        return f"{self.origin}/v1"

    def enqueue(self, *replies: Reply) -> None:
        """Answer the next requests with these replies, in order (used when no script is set)."""
        self.replies.extend(replies)

    async def start(self) -> None:
        app = web.Application(client_max_size=64 * 1024 * 1024)
        app.router.add_post("/v1/chat/completions", self._chat_completions)
        app.router.add_post("/v1/embeddings", self._chat_completions)
        self._runner = web.AppRunner(app, shutdown_timeout=1.0, access_log=None)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        await site.start()
        self._port = self._runner.addresses[0][1]

    async def stop(self) -> None:
        self._stopping.set()
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None

    async def __aenter__(self) -> FakeOpenAIServer:
        await self.start()
        return self

    async def __aexit__(self, *_: object) -> None:
        await self.stop()

    async def _chat_completions(self, request: web.Request) -> web.StreamResponse:
        body = await request.json()
        self.requests.append(RecordedRequest(request.path, dict(request.headers), body))
        self.in_flight += 1
        self.max_in_flight = max(self.max_in_flight, self.in_flight)
        try:
            return await self._answer(await self._next_reply(body), body)
        finally:
            self.in_flight -= 1

    async def _next_reply(self, body: Any) -> Reply:
        if self.script is not None:
            reply = self.script(body)
            return await reply if inspect.isawaitable(reply) else reply
        if self.replies:
            return self.replies.popleft()
        return Reply.error(500, '{"error": {"type": "fake_server", "code": "no_scripted_reply"}}')

    async def _answer(self, reply: Reply, body: Any) -> web.StreamResponse:
        if reply.hang:
            await self._pause(HANG_LIMIT_S)
            raise web.HTTPServiceUnavailable(text="the scripted hang ended")
        if reply.delay_s:
            await self._pause(reply.delay_s)
        if reply.body is not None or reply.status != 200:
            return web.Response(
                status=reply.status,
                text=reply.body or "",
                content_type="application/json",
                headers=dict(reply.headers),
            )
        model = str(body.get("model", "fake")) if isinstance(body, dict) else "fake"
        if reply.vectors is not None:
            return web.json_response(embeddings(reply.vectors, model=model))
        payload = completion(
            reply.content, model=model, finish_reason=reply.finish_reason, usage=reply.usage
        )
        return web.json_response(payload, headers=dict(reply.headers))

    async def _pause(self, seconds: float) -> None:
        """Wait, but no longer than until the server stops: stopping never waits on a script."""
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._stopping.wait(), seconds)


def embeddings(vectors: Sequence[Sequence[float]], *, model: str) -> dict[str, Any]:
    """An OpenAI ``/v1/embeddings`` response body with these vectors, in order."""
    return {
        "object": "list",
        "model": model,
        "data": [
            {"object": "embedding", "index": i, "embedding": list(v)} for i, v in enumerate(vectors)
        ],
        "usage": {"prompt_tokens": 0, "total_tokens": 0},
    }
