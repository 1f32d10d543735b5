"""The receipt of an erasure: what deleting a belief or forgetting a principal removed, and where.

The projector applies a ``belief.deleted`` or ``principal.forgotten`` event in one transaction;
the same transaction writes one ``erasure_receipt`` row (migration 0031) for it, keyed by the
event's id. What it counts is measured, not reported by the code that deletes: a deletion's rows
may go by the store's scrub or by re-resolving the principal's batches without them (a rewind),
a forgetting's by the store or, for the index of messages and the vectors, by the message
indexer and the embedding follower reading the same record first. So the rows that name the
content (a deletion) or the principal (a forgetting) are counted **before** the transaction
changes anything (:func:`measure_erasures`) and the index and vectors **after** as well
(:func:`write_receipts`); the followers add what they removed first (:mod:`engram.projections.erased`).

A receipt also says how the episodes that held the words lie in the episodic log — sealed
(unreadable once the key is gone), in clear, or unknown (read before Engram recorded it) — and
which data key this transaction destroyed. No words, and the principal only as the SHA-256 of
tenant/principal, as the principal tombstone names a forgotten person. Every door answers from
this row (:mod:`engram.service.erasures`), so none can say "nothing remains" while the log
still holds the words. An event applied again (a redelivery, a rewind) keeps its first receipt;
one that found nothing left to erase says so (``already``).
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

import asyncpg
import orjson

from engram.keys.store import receipt_salt
from engram.projections.beliefs.forgetting import FORGOTTEN_ROWS
from engram.projections.erased import Erased, deleted_rows, take_noted
from engram.schemas.claims import ClaimsBatchFormed
from engram.schemas.common import day_of, forgetting_receipt_id, principal_hash
from engram.schemas.corrections import BeliefDeleted, PrincipalForgotten

INDEXED = ("message", "public.embedding_vector")
"""What a deletion takes from the index of messages and the vectors, counted before and after."""

_EPISODES = """
SELECT CASE WHEN b.log_words = 'clear' AND EXISTS (
                SELECT 1 FROM formation_backlog s
                WHERE s.topic = b.topic AND s.partition = b.partition
                  AND s."offset" < b."offset" AND s.log_words = 'sealed')
            THEN 'clear_after_sealed' ELSE coalesce(b.log_words, 'unknown') END AS words,
       count(*) AS episodes
FROM formation_backlog b
WHERE b.tenant = $1 AND b.principal_hash = $2 AND coalesce(b.log_words, '') <> 'none'
  AND ($3::uuid[] IS NULL OR b.episode_id = ANY($3::uuid[]))
GROUP BY 1
"""
"""How the episodes that held the words lie on the log: sealed, in clear (``clear``: before
any sealed episode of their partition, so appended while the log was not encrypted;
``clear_after_sealed``: after one, so written around Engram's doors, which seal every episode
while encryption is on), or unknown (read before Engram recorded it)."""

_CONTENT = """
WITH gone AS (SELECT belief_id, statement, object_text FROM belief
              WHERE tenant = $1 AND principal = $2 AND content_hash = $3),
     quoted AS (SELECT e.quote, e.episode_id FROM evidence e JOIN gone USING (belief_id)),
     refused AS (SELECT r.episode_id FROM refusal r
                 WHERE r.tenant = $1 AND r.principal = $2 AND r.quote <> ''
                   AND (r.statement IN (SELECT statement FROM gone)
                        OR EXISTS (SELECT 1 FROM quoted q WHERE strpos(r.quote, q.quote) > 0
                                   OR strpos(q.quote, r.quote) > 0)))
SELECT (SELECT count(*) FROM gone) AS belief,
       (SELECT count(*) FROM quoted) AS evidence,
       (SELECT count(*) FROM refused) AS refusal,
       (SELECT count(*) FROM belief_rejection
        WHERE tenant = $1 AND principal = $2
          AND (content_hash = $3 OR replacement IN (SELECT object_text FROM gone))
          AND (statement IS NOT NULL OR replacement IS NOT NULL)) AS belief_rejection,
       ARRAY(SELECT episode_id FROM quoted UNION SELECT episode_id FROM refused) AS episodes
"""
"""What deleting a content will take: the same rows :func:`engram.projections.beliefs.forgetting.
delete_content` (or a re-resolution without them) removes, and the episodes they cite."""


@dataclass
class Erasing:
    """One deletion or forgetting of the chunk, measured before the transaction changed
    anything."""

    batch: ClaimsBatchFormed
    erased: Erased
    already: bool
    indexed_before: dict[str, int] = field(default_factory=dict)
    salt: uuid.UUID | None = None
    """A forgetting's: the salt beside the principal's data key, read before the transaction
    deletes it (:func:`engram.schemas.common.forgetting_receipt_id`)."""


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


async def _count(conn: asyncpg.Connection, table: str, tenant: str, principal: str) -> int:
    count: int = await conn.fetchval(
        f"SELECT count(*) FROM {table} WHERE tenant = $1 AND principal = $2", tenant, principal
    )
    return count


async def _forgotten_already(conn: asyncpg.Connection, tenant: str, principal: str) -> bool:
    found = await conn.fetchval(
        "SELECT 1 FROM principal_tombstone WHERE principal_hash = $1",
        principal_hash(tenant, principal),
    )
    return found is not None


async def _measure_forgetting(conn: asyncpg.Connection, batch: ClaimsBatchFormed) -> Erasing:
    tenant, principal = batch.tenant, batch.principal
    erased = Erased(episodes=await episodes_on_log(conn, tenant, principal))
    salt = await receipt_salt(conn, tenant, principal)
    erased.data_key_id = DESTROYED if salt is not None else None
    for table in FORGOTTEN_ROWS:
        erased.count(table.removeprefix("public."), await _count(conn, table, tenant, principal))
    already = await _forgotten_already(conn, tenant, principal)
    return Erasing(batch, erased, already=already, salt=salt)


async def _measure_deletion(
    conn: asyncpg.Connection, batch: ClaimsBatchFormed, deletion: BeliefDeleted
) -> Erasing:
    tenant, principal = batch.tenant, batch.principal
    row = await conn.fetchrow(_CONTENT, tenant, principal, deletion.content_hash)
    erased = Erased(episodes=await episodes_on_log(conn, tenant, principal, row["episodes"]))
    for place in ("belief", "evidence", "refusal", "belief_rejection"):
        erased.count(place, row[place])
    tombstoned = await conn.fetchval(
        "SELECT 1 FROM belief_tombstone WHERE tenant = $1 AND principal = $2 AND content_hash = $3",
        tenant,
        principal,
        deletion.content_hash,
    )
    already = tombstoned is not None or await _forgotten_already(conn, tenant, principal)
    indexed = {table: await _count(conn, table, tenant, principal) for table in INDEXED}
    return Erasing(batch, erased, already, indexed)


async def measure_erasures(
    conn: asyncpg.Connection, batches: Sequence[ClaimsBatchFormed]
) -> list[Erasing]:
    """Every deletion and forgetting among ``batches`` (the chunk's fresh records), measured
    as the projection stands before the chunk is applied."""
    measured = []
    for batch in batches:
        match batch.correction:
            case PrincipalForgotten():
                measured.append(await _measure_forgetting(conn, batch))
            case BeliefDeleted() as deletion:
                measured.append(await _measure_deletion(conn, batch, deletion))
            case _:
                pass
    return measured


DESTROYED = "destroyed"
"""What a forgetting's receipt row records of the data key it destroyed: that it did, not the
key's id — every sealed token names that id in clear, and the row names the principal by hash,
so the two together would let whoever knows the name find their records (migration 0044)."""


async def _has_key(conn: asyncpg.Connection, tenant: str, principal: str) -> bool:
    found = await conn.fetchval(
        "SELECT 1 FROM public.data_key WHERE tenant = $1 AND principal = $2", tenant, principal
    )
    return found is not None


async def _completed(conn: asyncpg.Connection, erasing: Erasing) -> Erased:
    """The measure of an erasure, completed after the transaction applied it."""
    tenant, principal = erasing.batch.tenant, erasing.batch.principal
    erased = erasing.erased
    if isinstance(erasing.batch.correction, PrincipalForgotten):
        for place, rows in (await take_noted(conn, tenant, principal)).items():
            erased.count(place, rows)  # what the indexer and the embedder removed first
        if await _has_key(conn, tenant, principal):  # not destroyed after all
            erased.data_key_id = None
    else:
        for table, before in erasing.indexed_before.items():
            after = await _count(conn, table, tenant, principal)
            erased.count(table.removeprefix("public."), max(before - after, 0))
    return erased


async def _drop_deletion_receipts(conn: asyncpg.Connection, erasing: Erasing) -> int:
    """Delete the receipts of the forgotten principal's earlier deletions; how many. Each keeps
    the deletion's event id, belief id and time beside the hash of the name, and the deletion's
    record on the log names the principal's pseudonym: kept, they would link the two."""
    status = await conn.execute(
        "DELETE FROM erasure_receipt WHERE tenant = $1 AND principal_hash = $2 "
        "AND kind = 'belief.deleted'",
        erasing.batch.tenant,
        principal_hash(erasing.batch.tenant, erasing.batch.principal),
    )
    return deleted_rows(status)


async def write_receipts(conn: asyncpg.Connection, measured: Sequence[Erasing]) -> None:
    """One receipt per measured erasure, in the transaction that applied them; a receipt
    already written (the event applied before) is kept."""
    rows = []
    forgotten = {
        principal_hash(erasing.batch.tenant, erasing.batch.principal)
        for erasing in measured
        if isinstance(erasing.batch.correction, PrincipalForgotten)
    }
    for erasing in measured:
        correction = erasing.batch.correction
        assert isinstance(correction, BeliefDeleted | PrincipalForgotten)
        digest = principal_hash(erasing.batch.tenant, erasing.batch.principal)
        if isinstance(correction, BeliefDeleted) and digest in forgotten:
            continue  # forgotten in the same chunk: no receipt of theirs names the log
        done = await _completed(conn, erasing)
        if isinstance(correction, PrincipalForgotten):
            done.count("erasure_receipt", await _drop_deletion_receipts(conn, erasing))
            # Keyed apart from the record on the log, and dated by the day: its id or its
            # exact time beside the hash would name the record that holds their pseudonym.
            event_id = forgetting_receipt_id(correction.event_id, erasing.salt)
            requested_at = day_of(correction.occurred_at)
        else:
            event_id, requested_at = correction.event_id, correction.occurred_at
        rows.append(
            (
                event_id,
                correction.type,
                erasing.batch.tenant,
                digest,
                correction.belief_id if isinstance(correction, BeliefDeleted) else None,
                requested_at,
                erasing.already,
                orjson.dumps(done.rows).decode(),
                done.data_key_id,
                done.episodes.get("sealed", 0),
                done.episodes.get("clear", 0) + done.episodes.get("clear_after_sealed", 0),
                done.episodes.get("unknown", 0),
                done.episodes.get("clear_after_sealed", 0),
            )
        )
    if rows:
        await conn.executemany(
            "INSERT INTO erasure_receipt (event_id, kind, tenant, principal_hash, belief_id, "
            "requested_at, already, erased, data_key_id, episodes_sealed, episodes_in_clear, "
            "episodes_unknown, episodes_in_clear_after_sealed) "
            "VALUES ($1, $2, $3, $4, $5, $6, $7, $8::jsonb, $9, $10, $11, $12, $13) "
            "ON CONFLICT (event_id) DO NOTHING",
            rows,
        )
