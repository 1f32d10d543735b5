"""``GET /v1/search``: full-text search over the caller's current beliefs, with evidence.

The tenant and principal come from the token (``Who``), as for every reader; ``project``
narrows to what applies there, ``generation`` reads another generation. The ranking and the
cursor are :mod:`engram.projections.reads.search`'s. Every refusal of the query itself is a 422 in the shape
of FastAPI's own field errors, naming ``q`` (or ``cursor``), so a client handles one format.
"""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query

from engram.projections.reads.search import (
    MAX_LIMIT,
    MAX_QUERY_CHARS,
    InvalidCursor,
    UnsearchableQuery,
    search_beliefs,
)
from engram.schemas.api import SearchMode, SearchResults
from engram.schemas.common import StoredText
from engram.web.auth import NameQuery, Who
from engram.web.invalid import invalid_query
from engram.web.readers import PrincipalReader

router = APIRouter(tags=["read"])


@router.get("/v1/search", response_model=SearchResults)
async def search(
    who: Who,
    db: PrincipalReader,
    q: Annotated[StoredText, Query(min_length=1, max_length=MAX_QUERY_CHARS)],
    project: NameQuery = None,
    mode: SearchMode = SearchMode.ANY,
    limit: Annotated[int, Query(ge=1, le=MAX_LIMIT)] = 20,
    cursor: Annotated[str | None, Query(min_length=1, max_length=200)] = None,
) -> SearchResults:
    """The caller's current beliefs that match ``q``, best first, each with its evidence (quote,
    span, episode) to cite; ``next_cursor`` fetches the next page. ``mode=any`` (default) reads
    ``q`` as a question: any word may match, hits with more distinct matching words first, then
    by relevance * confidence * corroboration * recency. ``mode=all`` reads web-search syntax
    (words, "a phrase", ``or``, ``-word``): every word must match, ordered by that score."""
    tenant, principal = who
    try:
        return await search_beliefs(
            db,
            tenant=tenant,
            principal=principal,
            query=q,
            mode=mode,
            project=project,
            limit=limit,
            cursor=cursor,
        )
    except UnsearchableQuery as error:
        raise invalid_query("q", str(error), q) from None
    except InvalidCursor as error:
        raise invalid_query("cursor", str(error), cursor) from None
