"""A quoted message in its conversation: the message a belief's evidence cites, with the message
before and after it in the same session, read from the message index.

The index holds only what may be shown: a message a deleted belief quoted, or any message of a
forgotten principal, is not there, so the inspector shows the quote alone for it. Scoped by
tenant and principal like every read.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import datetime

import asyncpg

_AROUND = """
WITH target AS (
    SELECT project, session, occurred_at, source_offset, message_ordinal FROM message
    WHERE tenant = $1 AND principal = $2 AND episode_id = $3 AND message_ordinal = $4
), around AS (
    (SELECT m.* FROM message m, target t
     WHERE m.tenant = $1 AND m.principal = $2 AND m.project = t.project AND m.session = t.session
       AND (m.occurred_at, m.source_offset, m.message_ordinal)
         < (t.occurred_at, t.source_offset, t.message_ordinal)
     ORDER BY m.occurred_at DESC, m.source_offset DESC, m.message_ordinal DESC LIMIT 1)
    UNION ALL
    (SELECT m.* FROM message m
     WHERE m.tenant = $1 AND m.principal = $2 AND m.episode_id = $3 AND m.message_ordinal = $4)
    UNION ALL
    (SELECT m.* FROM message m, target t
     WHERE m.tenant = $1 AND m.principal = $2 AND m.project = t.project AND m.session = t.session
       AND (m.occurred_at, m.source_offset, m.message_ordinal)
         > (t.occurred_at, t.source_offset, t.message_ordinal)
     ORDER BY m.occurred_at, m.source_offset, m.message_ordinal LIMIT 1)
)
SELECT episode_id, message_ordinal, role, content, occurred_at,
       (episode_id = $3 AND message_ordinal = $4) AS quoted
FROM around ORDER BY occurred_at, source_offset, message_ordinal
"""


@dataclass(frozen=True, slots=True)
class ContextMessage:
    episode_id: uuid.UUID
    message_ordinal: int
    role: str
    content: str
    occurred_at: datetime
    quoted: bool


async def messages_around(
    conn: asyncpg.Connection | asyncpg.Pool,
    *,
    tenant: str,
    principal: str,
    episode_id: uuid.UUID,
    message_ordinal: int,
) -> list[ContextMessage]:
    """The quoted message with the one before and the one after it in its session, in order;
    empty when the index does not hold the quoted message."""
    rows = await conn.fetch(_AROUND, tenant, principal, episode_id, message_ordinal)
    return [ContextMessage(**dict(row)) for row in rows]
