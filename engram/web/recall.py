"""``GET /v1/recall``: what answers a question — the caller's beliefs, then the messages.

Scoped by the token exactly as ``/v1/search`` (``Who``: the tenant and principal come from the
token, never from the request; ``generation`` reads another generation). The ranking, the
roles and the cursor are :mod:`engram.projections.reads.recall`'s. Every refusal of the request itself is a
422 in the shape of FastAPI's own field errors, naming ``q`` (or ``cursor``), so a client
handles one format.
"""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query, Request

from engram.projections.reads.recall import (
    MAX_LIMIT,
    MAX_QUERY_CHARS,
    OWN_WORDS,
    InvalidCursor,
    UnsearchableQuery,
    recall,
    semantic_query,
)
from engram.schemas.api import RecallResults
from engram.schemas.common import Role, StoredText
from engram.web.auth import NameQuery, Who
from engram.web.invalid import invalid_query
from engram.web.readers import DateTimeQuery, PrincipalReader

router = APIRouter(tags=["read"])


@router.get("/v1/recall", response_model=RecallResults)
async def recall_route(
    request: Request,
    who: Who,
    db: PrincipalReader,
    q: Annotated[StoredText, Query(min_length=1, max_length=MAX_QUERY_CHARS)],
    project: NameQuery = None,
    role: Annotated[list[Role] | None, Query(max_length=len(Role))] = None,
    limit: Annotated[int, Query(ge=1, le=MAX_LIMIT)] = 20,
    cursor: Annotated[str | None, Query(min_length=1, max_length=200)] = None,
    semantic: bool = True,
    asked_at: DateTimeQuery = None,
) -> RecallResults:
    """What answers ``q`` (a question in plain words): the caller's current beliefs that match,
    each with the quotes it came from, then the messages that answer — by default only the
    caller's own words (role ``user``); ``role`` (repeatable) asks for others, and every message
    says its role. Each message carries its turn's event id, ordinal, session, event time and
    log position; ``reflects`` says how far formation and the message index had got in each
    project of the page. ``next_cursor`` fetches the next page. Messages are matched by their
    words and, when the configured embedding generation is the active one, by meaning (a
    message's ``semantic_rank``); ``semantic=false`` matches by words only (no embedding of the
    question, no vector search). ``asked_at`` (RFC 3339, default now): when the question is
    asked, which relative times in it ("last week", "two months ago") are read from."""
    tenant, principal = who
    try:
        embedder = request.app.state.embedder if semantic else None
        return await recall(
            db,
            tenant=tenant,
            principal=principal,
            query=q,
            project=project,
            roles=role or OWN_WORDS,
            limit=limit,
            cursor=cursor,
            semantic=await semantic_query(db, embedder, q),
            asked_at=asked_at,
        )
    except UnsearchableQuery as error:
        raise invalid_query("q", str(error), q) from None
    except InvalidCursor as error:
        raise invalid_query("cursor", str(error), cursor) from None
