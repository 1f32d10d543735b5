"""Connections for reads: one generation per request, never a mix across a promote."""

from __future__ import annotations

import re
from collections.abc import AsyncIterator
from datetime import datetime
from typing import Annotated

import asyncpg
from fastapi import Depends, Query, Request, Response
from pydantic import BaseModel, BeforeValidator

from engram.generations.reading import reading
from engram.schemas.common import IDENTIFIER_PATTERN
from engram.web.auth import Who

GenerationQuery = Annotated[
    str | None, Query(min_length=1, max_length=200, pattern=IDENTIFIER_PATTERN)
]
PRINTABLE = r"^[^\x00-\x1f\x7f]+$"
"""A filter word: no control characters (PostgreSQL refuses a NUL in text; a 422 names it)."""

FilterWord = Annotated[str | None, Query(min_length=1, max_length=100, pattern=PRINTABLE)]
"""A relation or belief type to filter on."""

_DATE_TIME = re.compile(r"^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}")


def _date_time_text(value: object) -> object:
    """A query's date-time must be written as one: pydantic would read ``0.5`` or ``1700000000``
    as a Unix timestamp, which the contract (``format: date-time``) does not offer."""
    if isinstance(value, str) and not _DATE_TIME.match(value):
        raise ValueError(
            "must be an RFC 3339 date-time such as 2026-11-03T00:00:00Z, not a number or a date"
        )
    return value


DateTimeQuery = Annotated[
    datetime | None,
    Query(description="An RFC 3339 date-time, e.g. 2026-11-03T00:00:00Z."),
    BeforeValidator(_date_time_text),
]
"""A point in time in the query (``as_of``, ``since``): a 422 naming it for anything else."""

MAX_PAGE = 500
Limit = Annotated[int, Query(ge=1, le=MAX_PAGE, description="Items per page.")]
Cursor = Annotated[
    str | None,
    Query(
        min_length=1,
        max_length=512,
        description="``next_cursor`` of the previous page, unchanged; none for the first page.",
    ),
]


async def _reader(
    request: Request, generation: GenerationQuery = None
) -> AsyncIterator[asyncpg.Connection]:
    """A connection reading one generation — the live one unless ``generation`` names
    another — for the whole request: never a mix across a promote."""
    async with reading(request.app.state.pool, generation) as conn:
        yield conn


async def _principal_reader(
    request: Request, who: Who, generation: GenerationQuery = None
) -> AsyncIterator[asyncpg.Connection]:
    """Like the plain reader, for one principal's memory: the generation promoted for them,
    if any (a re-derivation they opted into), else the live one."""
    async with reading(request.app.state.pool, generation, principal=who) as conn:
        yield conn


Reader = Annotated[asyncpg.Connection, Depends(_reader)]
PrincipalReader = Annotated[asyncpg.Connection, Depends(_principal_reader)]


def as_json(model: BaseModel) -> Response:
    """A model already built from the database, serialised once: a route that returns the
    model itself has FastAPI validate it again against its ``response_model`` first, which cost
    as much as the query on a page of fifty beliefs. The route still declares the model, so
    the OpenAPI document (and the contract test) describe exactly this body."""
    return Response(model.model_dump_json(), media_type="application/json")
