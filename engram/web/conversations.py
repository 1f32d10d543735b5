"""``GET /v1/sessions/{session}/messages``: a conversation read back in the order it was said;
``GET /v1/whoami``: whom the token acts for.

What a framework's chat history (``engram.integrations``) shows after a restart: the messages of
the caller's session as the message index holds them, so what Engram forgot (a deleted belief's
quote, a forgotten principal) is not read back. Scoped by the token like every read (``Who``);
a session with no message of this principal's is an empty page, never a 404, since a history
starts empty.
"""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Path

from engram.projections.reads.cursor import InvalidCursor
from engram.projections.reads.session_messages import page_session_messages
from engram.schemas.api import SessionMessagePage, Whoami
from engram.schemas.common import IDENTIFIER_PATTERN
from engram.web.auth import NameQuery, Who
from engram.web.invalid import invalid_query
from engram.web.readers import Cursor, Limit, PrincipalReader

router = APIRouter(tags=["read"])
SessionName = Annotated[str, Path(min_length=1, max_length=200, pattern=IDENTIFIER_PATTERN)]


@router.get("/v1/whoami", response_model=Whoami)
async def whoami(who: Who) -> Whoami:
    """The tenant and principal this request acts for: a principal's token names its own; an
    operator's names the ``principal`` it is given (422 without one)."""
    tenant, principal = who
    return Whoami(tenant=tenant, principal=principal)


@router.get("/v1/sessions/{session}/messages", response_model=SessionMessagePage)
async def session_messages(
    session: SessionName,
    who: Who,
    db: PrincipalReader,
    project: NameQuery = None,
    limit: Limit = 50,
    cursor: Cursor = None,
) -> SessionMessagePage:
    """The session's messages, oldest first (event time, then log position, then ordinal),
    every role; ``project`` keeps to one project's session of that name. Messages appear once
    the message index has read their turn (``indexed_offset`` on ``/v1/freshness``)."""
    tenant, principal = who
    try:
        return await page_session_messages(
            db,
            tenant=tenant,
            principal=principal,
            session=session,
            project=project,
            limit=limit,
            cursor=cursor,
        )
    except InvalidCursor as error:
        raise invalid_query("cursor", str(error), cursor) from None
