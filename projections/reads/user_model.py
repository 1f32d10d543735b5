"""The user model: what holds about the person everywhere — active, user-scope attributes and
preferences they stated themselves (seed 000), most corroborated first.

The same selection as migration 0004's ``user_model`` view, written here against ``belief``
rather than read from the view: the view lives in ``public`` and would read the first
generation's beliefs whatever generation a reader is on.
"""

from __future__ import annotations

import asyncpg

from engram.schemas.api import UserModel, UserModelEntry

MAX_ENTRIES = 500

_USER_MODEL = """
SELECT b.belief_id, b.relation, nullif(b.facet, '') AS facet, b.belief_type,
       coalesce(oe.canonical_name, b.object_text) AS value, b.statement, b.confidence,
       b.corroboration, b.origin_scopes, b.valid_from, b.flagged_for_review
FROM belief b
LEFT JOIN entity oe ON oe.entity_id = b.object_entity_id
WHERE b.tenant = $1 AND b.principal = $2
  AND b.status = 'active' AND b.scope = 'user' AND b.polarity = 'assert'
  AND b.subject_kind = 'speaker' AND b.belief_type IN ('user_model_attr', 'preference')
ORDER BY b.corroboration DESC, b.confidence DESC, b.relation, b.belief_id
LIMIT $3
"""


async def user_model(
    conn: asyncpg.Connection | asyncpg.Pool,
    *,
    tenant: str,
    principal: str,
    limit: int = MAX_ENTRIES,
) -> UserModel:
    rows = await conn.fetch(_USER_MODEL, tenant, principal, limit + 1)
    entries = [
        UserModelEntry.model_validate(
            {
                **dict(row),
                "confidence": round(float(row["confidence"]), 4),
                "origin_scopes": list(row["origin_scopes"]),
            }
        )
        for row in rows[:limit]
    ]
    return UserModel(
        tenant=tenant, principal=principal, entries=entries, truncated=len(rows) > limit
    )
