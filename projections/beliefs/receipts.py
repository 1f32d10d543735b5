"""The receipt of an erasure: what deleting a belief or forgetting a principal removed, and where.

The projector applies a ``belief.deleted`` or ``principal.forgotten`` event in one transaction;
the same transaction writes one ``erasure_receipt`` row (migration 0031) for it, keyed by the
event's id: how many rows went from each table, the data key destroyed, and how the episodes
that held the words lie in the episodic log — sealed (unreadable once the key is gone), in
clear, or unknown (read before Engram recorded it). No words, and the principal only as the
SHA-256 of tenant/principal, as the principal tombstone names a forgotten person. Every door
(:mod:`engram.service.erasures`) answers from this row, so none can say "nothing remains" while
the log still holds the words.

An event applied again (a redelivery, a rewind that resolves it again) keeps its first receipt.
A deletion or forgetting that found nothing left to erase (the belief was deleted already, the
person forgotten already) gets a receipt that says so (``already``).
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable, Mapping

import asyncpg
import orjson

from engram.projections.erased import Erased
from engram.resolution.beliefs import principal_hash
from engram.schemas.claims import ClaimsBatchFormed
from engram.schemas.corrections import BeliefDeleted, PrincipalForgotten

_EPISODES = """
SELECT coalesce(log_words, 'unknown') AS words, count(*) AS episodes FROM formation_backlog
WHERE tenant = $1 AND principal_hash = $2 AND coalesce(log_words, '') <> 'none'
  AND ($3::uuid[] IS NULL OR episode_id = ANY($3::uuid[]))
GROUP BY 1
"""


async def episodes_on_log(
    conn: asyncpg.Connection,
    tenant: str,
    principal: str,
    episode_ids: Iterable[uuid.UUID] | None = None,
) -> dict[str, int]:
    """How the principal's episodes (or only ``episode_ids``) hold their words on the log."""
    ids = None if episode_ids is None else sorted(set(episode_ids))
    rows = await conn.fetch(_EPISODES, tenant, principal_hash(tenant, principal), ids)
    return {row["words"]: row["episodes"] for row in rows}


def _requested(batches: Iterable[ClaimsBatchFormed]) -> list[ClaimsBatchFormed]:
    return [b for b in batches if isinstance(b.correction, BeliefDeleted | PrincipalForgotten)]


async def write_receipts(
    conn: asyncpg.Connection,
    batches: Iterable[ClaimsBatchFormed],
    erased: Mapping[uuid.UUID, Erased],
) -> None:
    """One receipt per deletion or forgetting among ``batches`` (the chunk's fresh records),
    from what ``erased`` says its event removed; an event with nothing there erased nothing
    more (``already``). A receipt already written is kept."""
    rows = []
    for batch in _requested(batches):
        correction = batch.correction
        assert isinstance(correction, BeliefDeleted | PrincipalForgotten)
        done = erased.get(correction.event_id)
        rows.append(
            (
                correction.event_id,
                correction.type,
                batch.tenant,
                principal_hash(batch.tenant, batch.principal),
                correction.belief_id if isinstance(correction, BeliefDeleted) else None,
                correction.occurred_at,
                done is None,
                orjson.dumps(done.rows if done else {}).decode(),
                done.data_key_id if done else None,
                (done.episodes if done else {}).get("sealed", 0),
                (done.episodes if done else {}).get("clear", 0),
                (done.episodes if done else {}).get("unknown", 0),
            )
        )
    if rows:
        await conn.executemany(
            "INSERT INTO erasure_receipt (event_id, kind, tenant, principal_hash, belief_id, "
            "requested_at, already, erased, data_key_id, episodes_sealed, episodes_in_clear, "
            "episodes_unknown) VALUES ($1, $2, $3, $4, $5, $6, $7, $8::jsonb, $9, $10, $11, $12) "
            "ON CONFLICT (event_id) DO NOTHING",
            rows,
        )
