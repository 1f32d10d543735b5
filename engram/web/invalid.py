"""The 422 for a request that breaks the contract, safe for any input it quotes.

FastAPI answers a validation error with the error list, each error quoting the ``input`` it
refused. A JSON body may carry a lone surrogate (``"\\ud800"`` is valid JSON text, but no Unicode
scalar value): quoted as it is, the answer cannot be encoded as UTF-8, and the request ended in a
500 with its connection dropped. Here every quoted string is made encodable first — a surrogate
shown as its escape — so a refusal is always the 422 that names the field.
"""

from __future__ import annotations

from typing import Any

from fastapi import HTTPException, Request
from fastapi.encoders import jsonable_encoder
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse


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
    every string in it encodable."""
    assert isinstance(error, RequestValidationError)
    return JSONResponse(
        status_code=422, content={"detail": _encodable(jsonable_encoder(error.errors()))}
    )


def invalid_query(field: str, message: str, given: str | None) -> HTTPException:
    """A 422 naming query parameter ``field``, in the same shape as FastAPI's own field errors,
    for what a route finds wrong after validation (a query with nothing searchable, a cursor it
    did not issue)."""
    return HTTPException(
        422, [{"loc": ["query", field], "msg": message, "type": "value_error", "input": given}]
    )
