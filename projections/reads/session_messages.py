"""A conversation's messages in the order they were said, read back from the message index:
what a framework's chat history shows (``GET /v1/sessions/{session}/messages``).

The index holds only what may be shown — a message a deleted belief quoted and every message of
a forgotten principal are gone from it — so a history read back here forgets what Engram
forgot. Scoped by tenant and principal like every read; read by keyset on (event time, log
position, ordinal), so a page costs the same deep in a long session as at its start.
"""

from __future__ import annotations

from typing import Any

import asyncpg

from engram.projections.reads.cursor import decode_position_cursor, encode_position_cursor
from engram.schemas.api import SessionMessage, SessionMessagePage

CURSOR_KIND = "session-messages"

_PAGE = """
SELECT episode_id, message_ordinal, role, author, project, session, occurred_at,
       source_partition, source_offset, content
FROM message
WHERE tenant = $1 AND principal = $2 AND session = $3
  AND ($4::text IS NULL OR project = $4)
  AND ($5::timestamptz IS NULL
       OR (occurred_at, source_partition, source_offset, message_ordinal) > ($5, $6, $7, $8))
ORDER BY occurred_at, source_partition, source_offset, message_ordinal
LIMIT $9
"""


async def page_session_messages(
    conn: asyncpg.Connection | asyncpg.Pool,
    *,
    tenant: str,
    principal: str,
    session: str,
    project: str | None,
    limit: int,
    cursor: str | None,
) -> SessionMessagePage:
    """One page of the session's messages, oldest first; raises ``InvalidCursor`` for a cursor
    this list did not hand out."""
    after = decode_position_cursor(CURSOR_KIND, cursor) if cursor else None
    at, partition, offset, ordinal = after or (None, None, None, None)
    rows = await conn.fetch(
        _PAGE, tenant, principal, session, project, at, partition, offset, ordinal, limit + 1
    )
    items = [SessionMessage(**message_fields(row)) for row in rows[:limit]]
    next_cursor = None
    if len(rows) > limit:
        last = items[-1]
        next_cursor = encode_position_cursor(
            CURSOR_KIND, (last.occurred_at, last.partition, last.offset, last.message_ordinal)
        )
    return SessionMessagePage(items=items, next_cursor=next_cursor)


def message_fields(row: asyncpg.Record) -> dict[str, Any]:
    """A message row of the index as the fields every read that shows a message names it by
    (:class:`engram.schemas.api.SessionMessage`, and the recalled message around them): the
    turn's id and the message's place, who said it, where and when, its place on the log."""
    return {
        "event_id": row["episode_id"],
        "message_ordinal": row["message_ordinal"],
        "role": row["role"],
        "author": row["author"],
        "project": row["project"],
        "session": row["session"],
        "occurred_at": row["occurred_at"],
        "partition": row["source_partition"],
        "offset": row["source_offset"],
        "content": row["content"],
    }
