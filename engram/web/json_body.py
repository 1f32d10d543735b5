"""Reading a JSON body so that every way it can be unreadable is a 422 saying where.

FastAPI parses a JSON body with ``json.loads`` and answers a syntax error with a 422 naming the
position, but a body that is not UTF-8 (``UnicodeDecodeError``) or nests too deeply for Python's
parser (``RecursionError``) fell to its catch-all: a bare 400 "There was an error parsing the
body", naming nothing. Routes of :class:`JsonRoute` read their body with :class:`JsonRequest`,
which turns each of those into the ``JSONDecodeError`` FastAPI answers with its 422
(``{"type": "json_invalid", "loc": ["body", <position>], "ctx": {"error": …}}``), and adds the
line and column to every message, as ``engram ingest`` names the line of a file.

Python's ``json`` also reads what no contract field can hold and no answer can quote: ``NaN``,
``Infinity`` and ``-Infinity`` (not JSON at all, but accepted), a number too large for a float
(``1e400`` reads as infinity) and an integer longer than Python converts (4300 digits, a
``ValueError``). Quoted back by the 422 they made the answer unserialisable — a 500. Here each is
read as :class:`Unusable`, and a body holding any is refused by :class:`UnusableNumbers`: a 422
naming every field that holds one (``loc`` down to the array index), quoting the number as it
was written, whatever the field — one the contract has, or one it does not.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Coroutine
from dataclasses import dataclass
from typing import Any

from fastapi import HTTPException, Request, Response
from fastapi.routing import APIRoute

MAX_LITERAL_CHARS = 40
"""How much of an unusable number a 422 quotes (an over-long integer is cut, with its length)."""


@dataclass(frozen=True)
class Unusable:
    """A number as written in the body, which no finite float or Python int can hold."""

    literal: str
    why: str

    def error(self, path: tuple[str | int, ...]) -> dict[str, Any]:
        """The 422 field error for this number at ``path`` in the body."""
        quoted = self.literal
        if len(quoted) > MAX_LITERAL_CHARS:
            quoted = f"{quoted[:MAX_LITERAL_CHARS]}… ({len(self.literal)} characters)"
        return {
            "type": "finite_number",
            "loc": ["body", *path],
            "msg": f"{self.why}; send a finite number within range, or leave the field out",
            "input": quoted,
        }


class UnusableNumbers(ValueError):
    """A body that holds numbers no field can take: the field errors naming each."""

    def __init__(self, errors: list[dict[str, Any]]) -> None:
        super().__init__(f"{len(errors)} unusable number(s) in the body")
        self.errors = errors


def _constant(literal: str) -> Unusable:
    return Unusable(literal, f"{literal} is not a finite number (and not JSON)")


def _float(literal: str) -> float | Unusable:
    value = float(literal)
    if math.isfinite(value):
        return value
    return Unusable(literal, "a number beyond the range of a 64-bit float is not finite")


def _int(literal: str) -> int | Unusable:
    try:
        return int(literal)
    except ValueError:  # more digits than sys.get_int_max_str_digits()
        return Unusable(literal, f"an integer of {len(literal)} digits is beyond any field's range")


def _unusable_at(value: Any) -> list[dict[str, Any]]:
    """Every :class:`Unusable` in ``value`` with where it is, in document order; iterative,
    so a body as deep as the parser reads is walked too."""
    found: list[dict[str, Any]] = []
    stack: list[tuple[tuple[str | int, ...], Any]] = [((), value)]
    while stack:
        path, node = stack.pop()
        if isinstance(node, Unusable):
            found.append(node.error(path))
        elif isinstance(node, dict):
            stack.extend(((*path, k), v) for k, v in reversed(node.items()))
        elif isinstance(node, list):
            stack.extend(((*path, i), v) for i, v in reversed(list(enumerate(node))))
    return found


def _unreadable(message: str, text: str, position: int) -> json.JSONDecodeError:
    """A ``JSONDecodeError`` whose message (all FastAPI passes on) says where."""
    line = text.count("\n", 0, position) + 1
    column = position - (text.rfind("\n", 0, position) + 1) + 1
    return json.JSONDecodeError(f"{message} at line {line}, column {column}", text, position)


def read_json(body: bytes) -> Any:
    """The JSON value of ``body``; ``JSONDecodeError`` naming the line and column (in
    characters) for anything that is not UTF-8 JSON Python can read, and
    :class:`UnusableNumbers` naming the fields of numbers that are not finite or too long."""
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError as error:
        before = body[: error.start].decode("utf-8", "replace")
        raise _unreadable(
            f"the body is not UTF-8: byte 0x{body[error.start]:02x} (byte {error.start})",
            before,
            len(before),
        ) from None
    unusable: list[Unusable] = []

    def noted(read: Callable[[str], Any]) -> Callable[[str], Any]:
        def reading(literal: str) -> Any:
            value = read(literal)
            if isinstance(value, Unusable):
                unusable.append(value)
            return value

        return reading

    try:
        value = json.loads(
            text, parse_constant=noted(_constant), parse_float=noted(_float), parse_int=noted(_int)
        )
    except json.JSONDecodeError as error:
        raise _unreadable(error.msg, text, error.pos) from None
    except RecursionError:
        raise json.JSONDecodeError(
            "arrays and objects nest too deeply to read (the contract nests a few levels)",
            text,
            0,
        ) from None
    if unusable:
        raise UnusableNumbers(_unusable_at(value))
    return value


class JsonRequest(Request):
    """A request whose ``json()`` is :func:`read_json` of its body; unusable numbers are the
    422 naming their fields (an ``HTTPException``, which FastAPI lets through its body reading
    as it is; any other exception there it turns into a bare 400)."""

    async def json(self) -> Any:
        if not hasattr(self, "_json"):
            try:
                self._json = read_json(await self.body())
            except UnusableNumbers as refused:
                raise HTTPException(422, refused.errors) from None
        return self._json


class JsonRoute(APIRoute):
    """A route that reads its JSON body with :class:`JsonRequest` (FastAPI's documented way
    to give a route another request class)."""

    def get_route_handler(self) -> Callable[[Request], Coroutine[Any, Any, Response]]:
        handler = super().get_route_handler()

        async def with_json_request(request: Request) -> Response:
            return await handler(JsonRequest(request.scope, request.receive))

        return with_json_request
