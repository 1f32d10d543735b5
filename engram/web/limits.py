"""A ceiling on request bodies, enforced while they arrive rather than after they are parsed.

FastAPI reads and parses a JSON body before any dependency runs, so a route cannot refuse a
large body itself without having paid for it. This ASGI middleware answers 413 at once when
``Content-Length`` is over the limit, and counts the bytes of a body without one, refusing at
the byte that crosses it.
"""

from __future__ import annotations

from fastapi import HTTPException
from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Message, Receive, Scope, Send


def _too_large(limit: int) -> str:
    return f"the request body is over {limit} bytes (ENGRAM_API_MAX_BODY_BYTES); split the batch"


class BodyLimit:
    def __init__(self, app: ASGIApp, *, max_bytes: int) -> None:
        self._app = app
        self._max = max_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self._app(scope, receive, send)
            return
        declared = dict(scope["headers"]).get(b"content-length")
        if declared is not None and declared.isdigit() and int(declared) > self._max:
            await JSONResponse({"detail": _too_large(self._max)}, 413)(scope, receive, send)
            return
        await self._app(scope, self._counting(receive), send)

    def _counting(self, receive: Receive) -> Receive:
        seen = 0

        async def counted() -> Message:
            nonlocal seen
            message = await receive()
            seen += len(message.get("body", b""))
            if seen > self._max:
                # FastAPI re-raises an HTTPException from reading the body as it is.
                raise HTTPException(413, _too_large(self._max))
            return message

        return counted
