"""The 422 for a request that breaks the contract, safe for any input it quotes.

FastAPI answers a validation error with the error list, each error quoting the ``input`` it
refused. A JSON body may carry a lone surrogate (``"\\ud800"`` is valid JSON text, but no Unicode
scalar value): quoted as it is, the answer cannot be encoded as UTF-8, and the request ended in a
500 with its connection dropped. Here every quoted string is made encodable first — a surrogate
shown as its escape — so a refusal is always the 422 that names the field.

Each error also quotes only an excerpt: a string past :data:`MAX_ECHO_CHARS` is cut there (its
length said), an object or array whose JSON is longer is quoted as the start of that JSON text,
and past :data:`MAX_ERRORS` errors the rest are counted, not listed. A 100 kB field of the wrong
shape, or an 8 MB batch of them, is refused in a few kilobytes, never echoed back whole.
"""

from __future__ import annotations

import json
import math
from typing import Any

from fastapi import HTTPException, Request
from fastapi.encoders import jsonable_encoder
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse

MAX_ECHO_CHARS = 200
"""The most characters of a refused input a 422 quotes (the excerpt notes the full length)."""
MAX_ERRORS = 50
"""The most field errors a 422 lists; the rest are counted in one last entry."""


def _cut(text: str) -> str:
    if len(text) <= MAX_ECHO_CHARS:
        return text
    return f"{text[:MAX_ECHO_CHARS]}… ({len(text)} characters in all)"


def excerpt(value: Any) -> Any:
    """What a 422 may quote of a refused input: bounded, and serialisable by any JSON encoder
    (a float that is not finite is quoted as its name, any other object as its ``str``).
    Never walks the input in Python: a body nested as deep as the parser reads is quoted too."""
    if isinstance(value, str):
        return _encodable(_cut(value))
    if isinstance(value, float) and not math.isfinite(value):
        return repr(value)
    if value is None or isinstance(value, bool | int | float):
        return value
    if not isinstance(value, dict | list | tuple):
        return _encodable(_cut(str(value)))
    try:
        text = json.dumps(value, default=str, ensure_ascii=False)
    except (RecursionError, ValueError, TypeError):
        return f"an {type(value).__name__} too deeply nested or too odd to quote"
    if len(text) > MAX_ECHO_CHARS:
        return _encodable(_cut(text))
    return _encodable(json.loads(text, parse_constant=str))


def bounded(errors: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Field errors as a 422 lists them: each ``input`` an :func:`excerpt`, at most
    :data:`MAX_ERRORS` of them."""
    shown = [
        {
            **_encodable(jsonable_encoder({k: v for k, v in e.items() if k != "input"})),
            "input": excerpt(e.get("input")),
        }
        for e in errors[:MAX_ERRORS]
    ]
    if len(errors) > MAX_ERRORS:
        shown.append(
            {
                "type": "more_errors",
                "loc": ["body"],
                "msg": f"{len(errors) - MAX_ERRORS} more errors not listed; correct these first",
                "input": None,
            }
        )
    return shown


def _encodable(value: Any) -> Any:
    if isinstance(value, str):
        return value.encode("utf-8", "backslashreplace").decode("utf-8")
    if isinstance(value, dict):
        return {_encodable(k): _encodable(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_encodable(v) for v in value]
    return value


async def invalid_request(request: Request, error: Exception) -> JSONResponse:
    """FastAPI's own 422 body (``{"detail": [{"loc", "msg", "type", "input"}, ...]}``), with
    every string in it encodable and every input an excerpt."""
    assert isinstance(error, RequestValidationError)
    return JSONResponse(status_code=422, content={"detail": bounded(list(error.errors()))})


def invalid_query(field: str, message: str, given: str | None) -> HTTPException:
    """A 422 naming query parameter ``field``, in the same shape as FastAPI's own field errors,
    for what a route finds wrong after validation (a query with nothing searchable, a cursor it
    did not issue)."""
    return HTTPException(
        422,
        [{"loc": ["query", field], "msg": message, "type": "value_error", "input": excerpt(given)}],
    )
