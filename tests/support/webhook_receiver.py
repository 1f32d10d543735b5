"""A webhook receiver on loopback for the notification tests: a real HTTP server (aiohttp) in
the test's loop that verifies every request with the published ``standardwebhooks`` library,
records what it received, answers what the test tells it to, and can be taken down and brought
back on the same port."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from aiohttp import web
from standardwebhooks import Webhook
from standardwebhooks.webhooks import WebhookVerificationError

from tests.support.http import free_port


@dataclass
class Received:
    webhook_id: str
    headers: dict[str, str]
    body: bytes
    verified: bool

    @property
    def payload(self) -> dict[str, Any]:
        loaded: dict[str, Any] = json.loads(self.body)
        return loaded


@dataclass
class Receiver:
    """Answers ``status`` (or ``answer(received)``) to every POST on any path."""

    secret: str | None = None
    status: int = 200
    answer: Callable[[Received], int] | None = None
    hold: asyncio.Event | None = None
    """When set, a request is held (unanswered) until the event is set."""
    received: list[Received] = field(default_factory=list)
    arrived: asyncio.Event = field(default_factory=asyncio.Event)
    port: int = 0
    _runner: web.AppRunner | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/hooks/engram"

    async def start(self) -> Receiver:
        app = web.Application()
        app.router.add_post("/{tail:.*}", self._handle)
        self._runner = web.AppRunner(app, access_log=None)
        await self._runner.setup()
        self.port = self.port or free_port()
        await web.TCPSite(self._runner, "127.0.0.1", self.port, reuse_address=True).start()
        return self

    async def stop(self) -> None:
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None

    def verified(self) -> list[Received]:
        return [r for r in self.received if r.verified]

    def of_type(self, kind: str) -> list[Received]:
        return [r for r in self.verified() if r.payload["type"] == kind]

    async def _handle(self, request: web.Request) -> web.Response:
        body = await request.read()
        headers = {k.lower(): v for k, v in request.headers.items()}
        received = Received(
            headers.get("webhook-id", ""), headers, body, self._verify(body, headers)
        )
        self.received.append(received)
        self.arrived.set()
        if self.hold is not None:
            await self.hold.wait()
        status = self.answer(received) if self.answer is not None else self.status
        return web.Response(status=status)

    def _verify(self, body: bytes, headers: dict[str, str]) -> bool:
        if self.secret is None:
            return False
        try:
            Webhook(self.secret).verify(body, headers)
        except WebhookVerificationError:
            return False
        return True
