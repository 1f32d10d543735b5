"""Counting what an erasure removed, wherever it was removed: the floor under the receipts.

A forgetting is applied by the belief projector (every projected row, the data key) and, as each
reads the ``principal.forgotten`` record from the log, by the message indexer (the index of
messages) and the embedding follower (vectors) — whichever of them comes first finds the rows.
Each counts what its own transaction removed (:class:`Erased`); the followers hand theirs on with
:func:`note_erased`, under the principal's lock that all three take, so the receipt of the
forgetting (``erasure_receipt``, written by the projector) ends up with every row whoever removed
it: added to the receipt when it exists already, kept in ``erasure_part`` until the projector
takes it (:func:`take_noted`) when it does not.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

import asyncpg
import orjson

from engram.schemas.common import principal_hash


@dataclass(slots=True)
class Erased:
    """What one erasure removed: rows per table, the data key destroyed, and the log's share."""

    rows: dict[str, int] = field(default_factory=dict)
    data_key_id: str | None = None
    episodes: dict[str, int] = field(default_factory=dict)
    """Episodes that held the words, by how the log holds them: sealed, clear, unknown."""

    def count(self, place: str, rows: int) -> None:
        if rows:
            self.rows[place] = self.rows.get(place, 0) + rows


def deleted_rows(status: str) -> int:
    """The row count of a ``DELETE n`` / ``UPDATE n`` status string."""
    return int(status.rpartition(" ")[2] or 0)


_ADD_TO_RECEIPT = """
UPDATE erasure_receipt r SET erased = (
    SELECT jsonb_object_agg(key, total) FROM (
        SELECT key, sum(value::int) AS total
        FROM (SELECT * FROM jsonb_each_text(r.erased) UNION ALL
              SELECT * FROM jsonb_each_text($3::jsonb)) AS both_counts (key, value)
        GROUP BY key) AS summed)
WHERE r.event_id = (SELECT event_id FROM erasure_receipt
                    WHERE tenant = $1 AND principal_hash = $2 AND kind = 'principal.forgotten'
                    ORDER BY applied_at DESC LIMIT 1)
"""

_KEEP_PART = """
INSERT INTO erasure_part (tenant, principal_hash, place, rows)
SELECT $1, $2, key, value::int FROM jsonb_each_text($3::jsonb)
ON CONFLICT (tenant, principal_hash, place) DO UPDATE SET rows = erasure_part.rows + EXCLUDED.rows
"""


async def note_erased(
    conn: asyncpg.Connection, tenant: str, principal: str, counts: Mapping[str, int]
) -> None:
    """What a follower removed of a forgotten principal, for the forgetting's receipt: added to
    it if the projector has written it, kept for the projector otherwise. In the follower's
    transaction, under the principal's lock."""
    removed = {place: rows for place, rows in counts.items() if rows}
    if not removed:
        return
    args = (tenant, principal_hash(tenant, principal), orjson.dumps(removed).decode())
    if deleted_rows(await conn.execute(_ADD_TO_RECEIPT, *args)) == 0:
        await conn.execute(_KEEP_PART, *args)


async def take_noted(conn: asyncpg.Connection, tenant: str, principal: str) -> dict[str, int]:
    """What the followers removed of the principal before the projector's forgetting: taken
    (deleted) for its receipt."""
    rows = await conn.fetch(
        "DELETE FROM erasure_part WHERE tenant = $1 AND principal_hash = $2 RETURNING place, rows",
        tenant,
        principal_hash(tenant, principal),
    )
    return {row["place"]: row["rows"] for row in rows}
