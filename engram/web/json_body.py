"""Reading a JSON body so that every way it can be unreadable is a 422 saying where.

FastAPI parses a JSON body with ``json.loads`` and answers a syntax error with a 422 naming the
position, but a body that is not UTF-8 (``UnicodeDecodeError``) or nests too deeply for Python's
parser (``RecursionError``) fell to its catch-all: a bare 400 "There was an error parsing the
body", naming nothing. Routes of :class:`JsonRoute` read their body with :class:`JsonRequest`,
which turns each of those into the ``JSONDecodeError`` FastAPI answers with its 422
(``{"type": "json_invalid", "loc": ["body", <position>], "ctx": {"error": …}}``), and adds the
line and column to every message, as ``engram ingest`` names the line of a file.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Coroutine
from typing import Any

from fastapi import Request, Response
from fastapi.routing import APIRoute


def _unreadable(message: str, text: str, position: int) -> json.JSONDecodeError:
    """A ``JSONDecodeError`` whose message (all FastAPI passes on) says where."""
    line = text.count("\n", 0, position) + 1
    column = position - (text.rfind("\n", 0, position) + 1) + 1
    return json.JSONDecodeError(f"{message} at line {line}, column {column}", text, position)


def read_json(body: bytes) -> Any:
    """The JSON value of ``body``; ``JSONDecodeError`` naming the line and column (in
    characters) for anything that is not UTF-8 JSON Python can read."""
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError as error:
        before = body[: error.start].decode("utf-8", "replace")
        raise _unreadable(
            f"the body is not UTF-8: byte 0x{body[error.start]:02x} (byte {error.start})",
            before,
            len(before),
        ) from None
    try:
        return json.loads(text)
    except json.JSONDecodeError as error:
        raise _unreadable(error.msg, text, error.pos) from None
    except RecursionError:
        raise json.JSONDecodeError(
            "arrays and objects nest too deeply to read (the contract nests a few levels)",
            text,
            0,
        ) from None


class JsonRequest(Request):
    """A request whose ``json()`` is :func:`read_json` of its body."""

    async def json(self) -> Any:
        if not hasattr(self, "_json"):
            self._json = read_json(await self.body())
        return self._json


class JsonRoute(APIRoute):
    """A route that reads its JSON body with :class:`JsonRequest` (FastAPI's documented way
    to give a route another request class)."""

    def get_route_handler(self) -> Callable[[Request], Coroutine[Any, Any, Response]]:
        handler = super().get_route_handler()

        async def with_json_request(request: Request) -> Response:
            return await handler(JsonRequest(request.scope, request.receive))

        return with_json_request
