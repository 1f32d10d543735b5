"""Writing claims batches: beliefs, evidence, entities, refusals, the run audit, the memory-event
outbox and the consumed offset, in one PostgreSQL transaction per chunk of consecutive records.

A chunk is projected in three steps: resolve it in canonical order
(:mod:`engram.projections.beliefs.canonical`: rewind, load every row its batches can touch with
one query per table, redact, resolve the whole chunk in memory with
:func:`engram.resolution.chunk.resolve_chunk`, keep), then write what resolution returns with
one set-based statement per table (:func:`write_changes`). The chunk's
principals are locked first, and the stored offset advanced last, inside the same transaction,
so a projector killed at any point wrote all of a chunk and its offset or none of it; a batch's
run id (its primary key) makes a batch redelivered at another offset a no-op as well.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import asyncpg

from engram.infra.db import transaction
from engram.projections.beliefs.canonical import resolve_in_canonical_order
from engram.projections.beliefs.forgetting import delete_content, forget_principal
from engram.projections.beliefs.memory_events import QueuedPayloads
from engram.projections.beliefs.receipts import measure_erasures, write_receipts
from engram.projections.following import Tracking
from engram.projections.messages import MessageKey, hide_messages
from engram.projections.principal_lock import lock_principals
from engram.projections.rows import columns_of, copy_rows, update_rows
from engram.resolution.beliefs import (
    MUTABLE_BELIEF_COLUMNS,
    BeliefRow,
    Changes,
    EntityRow,
    EvidenceRow,
    PrincipalTombstoneRow,
    RefusalRow,
    RejectionRow,
    RunRow,
    TombstoneRow,
)
from engram.resolution.chunk import BatchOutcome
from engram.schemas.claims import ClaimsBatchFormed, RefusalReason
from engram.schemas.common import principal_hash, principal_key
from engram.schemas.memory_events import MemoryChanged, PrincipalErased
from engram.watermarks.backlog import mark_formed

PROJECTOR = "beliefs"

BELIEFS_TRACKING = Tracking(PROJECTOR)
"""Where the projector stores its offsets: the generation's ``projector_offset``."""


@dataclass(frozen=True)
class ClaimsRecord:
    """One record of ``engram.claims``, decoded, with the position it was read from and, when
    known, the bytes it was decoded from (kept as they are in ``claims_history``: a reader
    decodes them to this very batch, so serialising it again would only cost time)."""

    batch: ClaimsBatchFormed
    offset: int
    payload: bytes | None = None

    @property
    def lane_key(self) -> bytes:
        """Whose batch this is, as ``engram.claims`` keys it: what picks its lane."""
        return principal_key(self.batch.tenant, self.batch.principal)


async def project_records(
    conn: asyncpg.Connection,
    records: Sequence[ClaimsRecord],
    *,
    topic: str,
    partition: int,
    read_through: int,
    queued: QueuedPayloads | None = None,
    store_offset: Callable[[], int] | None = None,
) -> list[BatchOutcome]:
    """Apply records of one partition exactly once, in one transaction.

    The records are in offset order, and every record of their principals below the last of
    them has been applied or is among them (the projector's lanes: :mod:`engram.projections.beliefs.lanes`).
    The transaction first takes its principals' locks (:data:`engram.projections.principal_lock.LOCK_PRINCIPALS`), so a second
    projector of the partition (one a rebalance has not yet stopped) resolves them only after
    this commits, and then sees these batches applied. Records below the stored offset were
    applied already and are skipped; so is a batch whose run is there.

    The stored offset only ever moves forward, at the end of the transaction (so lanes of one
    partition wait for each other only for their commits), to ``store_offset()`` asked just
    before it is written (the lanes' safe point) or, without it, one past ``read_through``: the
    last offset read, which may be past the last record given when undecodable records were
    left out. Once the transaction has committed, the memory events it queued are handed to
    ``queued``, for the outbox drain to publish without reading them back.
    """
    async with transaction(conn):
        principals = {(r.batch.tenant, r.batch.principal) for r in records}
        await lock_principals(conn, principals)
        next_offset = await BELIEFS_TRACKING.stored(conn, topic, partition)
        stale = [next_offset is not None and r.offset < next_offset for r in records]
        fresh = [r.batch for r, old in zip(records, stale, strict=True) if not old]
        wire = {id(r.batch): r.payload for r in records if r.payload is not None}
        erasing = await measure_erasures(conn, fresh)  # before anything is undone or deleted
        changes, resolved = await resolve_in_canonical_order(conn, fresh, wire)
        inserted = await write_changes(conn, changes)
        await write_receipts(conn, erasing)
        advance_to = store_offset() if store_offset is not None else read_through + 1
        if next_offset is None or advance_to > next_offset:
            await advance_offset(conn, topic=topic, partition=partition, next_offset=advance_to)
    if queued is not None:
        queued.add(inserted)
    outcomes = iter(resolved)
    return [BatchOutcome(skipped=True) if old else next(outcomes) for old in stale]


async def advance_offset(
    conn: asyncpg.Connection, *, topic: str, partition: int, next_offset: int
) -> None:
    """Move a partition's stored offset forward to ``next_offset`` (never back): only ever to
    an offset below which every record is applied."""
    await BELIEFS_TRACKING.advance(conn, topic, partition, next_offset)


async def stored_offsets(pool: asyncpg.Pool, topic: str) -> dict[int, int]:
    """The projector's stored offset of each partition of ``topic``."""
    return await BELIEFS_TRACKING.stored_offsets(pool, topic)


_BELIEF_COLUMNS = columns_of(BeliefRow)
_ENTITY_COLUMNS = columns_of(EntityRow)
_RUN_COLUMNS = columns_of(RunRow)
_EVIDENCE_COLUMNS = columns_of(EvidenceRow)
_REFUSAL_COLUMNS = columns_of(RefusalRow)
_REJECTION_COLUMNS = columns_of(RejectionRow)
_TOMBSTONE_COLUMNS = columns_of(TombstoneRow)
_PRINCIPAL_TOMBSTONE_COLUMNS = columns_of(PrincipalTombstoneRow)
_OUTBOX_COLUMNS = ["event_id", "tenant", "principal", "payload"]
_PENDING_COLUMNS = ["event_id", "tenant", "principal"]


async def write_changes(conn: asyncpg.Connection, changes: Changes) -> list[tuple[uuid.UUID, str]]:
    """Write what resolution decided, one statement per table, in dependency order: runs and
    entities before the beliefs that reference them; updates to existing beliefs (which only
    ever end a value or link a conflict) before the inserts that replace them, so the
    one-current-value constraint holds at every statement. Deletions and forgetting go last,
    so they also remove what this chunk wrote. Returns the memory events queued in the outbox
    (id and JSON; not those whose rows were there already)."""
    await copy_rows(conn, "consolidation_run", changes.runs, columns=_RUN_COLUMNS)
    entities = list(changes.entities_new.values())
    await copy_rows(conn, "entity", entities, columns=_ENTITY_COLUMNS, skip_existing=True)
    await update_rows(
        conn,
        "entity",
        list(changes.entities_changed.values()),
        key="entity_id",
        columns=("aliases",),
    )
    await update_rows(
        conn,
        "belief",
        list(changes.beliefs_changed.values()),
        key="belief_id",
        columns=MUTABLE_BELIEF_COLUMNS,
    )
    await copy_rows(conn, "belief", list(changes.beliefs_new.values()), columns=_BELIEF_COLUMNS)
    # Evidence and refusals are idempotent by their name-based ids; resolution already leaves
    # out what the loaded rows show, and a duplicate it could not see must not stop the stream.
    await copy_rows(
        conn, "evidence", changes.evidence, columns=_EVIDENCE_COLUMNS, skip_existing=True
    )
    await copy_rows(conn, "refusal", changes.refusals, columns=_REFUSAL_COLUMNS, skip_existing=True)
    # A statement of deleted content is refused as tombstoned: its message leaves the index too.
    await hide_messages(
        conn,
        [
            MessageKey(r.tenant, r.principal, r.episode_id, r.message_ordinal)
            for r in changes.refusals
            if r.reason == RefusalReason.TOMBSTONED
        ],
    )
    await copy_rows(conn, "belief_rejection", changes.rejections, columns=_REJECTION_COLUMNS)
    queued = await _record_in_outbox(conn, changes.memory_events)
    await mark_formed(conn, [(f.topic, f.partition, f.offset) for f in changes.formed])
    for tombstone in changes.tombstones:
        await delete_content(conn, tombstone)
    await copy_rows(conn, "belief_tombstone", changes.tombstones, columns=_TOMBSTONE_COLUMNS)
    for tenant, principal in changes.forgotten:
        await forget_principal(conn, tenant, principal)
    await copy_rows(
        conn,
        "principal_tombstone",
        changes.principal_tombstones,
        columns=_PRINCIPAL_TOMBSTONE_COLUMNS,
    )
    # After the forgetting, which deleted the principal's queued events with their other rows.
    return queued + await _record_in_outbox(conn, erasure_notices(changes))


def _owner(event: MemoryChanged | PrincipalErased) -> str:
    """The outbox row's principal (and so the record's key): a forgotten principal's notice
    has only their hash, which is what its row keeps."""
    return event.principal if isinstance(event, MemoryChanged) else event.principal_hash


_ERASED = uuid.UUID("5d6f0b52-4f1e-5a43-9c7e-2b8f3c1d9a60")
"""Namespace of the ids of ``principal.forgotten`` events."""


def erasure_notices(changes: Changes) -> list[PrincipalErased]:
    """A ``principal.forgotten`` event for each principal the chunk forgot, naming them only by
    their tombstone's hash. Its id is a name of the forgetting's own event, so a redelivery or a
    replay queues it once; the projector publishes it like any memory event, and the notifier
    tells the tenant's endpoints."""
    tombstones = {row.principal_hash: row for row in changes.principal_tombstones}
    notices = []
    for tenant, principal in changes.forgotten:
        tombstone = tombstones[principal_hash(tenant, principal)]
        notices.append(
            PrincipalErased(
                event_id=uuid.uuid5(_ERASED, str(tombstone.event_id)),
                tenant=tenant,
                principal_hash=tombstone.principal_hash,
                episode_id=tombstone.event_id,
                occurred_at=tombstone.forgotten_at,
            )
        )
    return notices


async def _record_in_outbox(
    conn: asyncpg.Connection, events: Sequence[MemoryChanged | PrincipalErased]
) -> list[tuple[uuid.UUID, str]]:
    """Memory events, published after commit by :func:`engram.projections.beliefs.memory_events.drain_outbox`;
    the ones queued now, with their JSON. An event id is stable, so a replay into emptied
    projections does not queue it twice, and an event already queued keeps its row.

    Each event queued gets a row in the outbox (kept) and one in ``memory_event_pending``
    (deleted once published), in the same order. Both are copied in a savepoint, as the other
    idempotent rows are (:func:`engram.projections.rows.copy_rows`); only when an id is in the outbox
    already (a rewind queues events again) is that undone and the events inserted with
    ``ON CONFLICT DO NOTHING``, whose returned rows are the ones queued as pending."""
    if not events:
        return []
    rows = [(e.event_id, e.tenant, _owner(e), e.model_dump_json()) for e in events]
    try:
        async with conn.transaction():
            await conn.copy_records_to_table(
                "memory_event_outbox", records=rows, columns=_OUTBOX_COLUMNS
            )
            await conn.copy_records_to_table(
                "memory_event_pending", records=[row[:3] for row in rows], columns=_PENDING_COLUMNS
            )
        return [(event_id, payload) for event_id, _, _, payload in rows]
    except asyncpg.UniqueViolationError:
        pass
    first: dict[uuid.UUID, str] = {}  # an id twice in one chunk: the first row is the one kept
    for event_id, _, _, payload in rows:
        first.setdefault(event_id, payload)
    inserted = await conn.fetch(
        """
        WITH queued AS (
            INSERT INTO memory_event_outbox (event_id, tenant, principal, payload)
            SELECT e.event_id, e.tenant, e.principal, e.payload::jsonb
            FROM unnest($1::uuid[], $2::text[], $3::text[], $4::text[])
              AS e(event_id, tenant, principal, payload)
            ON CONFLICT (event_id) DO NOTHING
            RETURNING event_id, tenant, principal
        )
        INSERT INTO memory_event_pending (event_id, tenant, principal)
        SELECT q.event_id, q.tenant, q.principal
        FROM queued q JOIN (
            SELECT u.event_id, min(u.position) AS position
            FROM unnest($1::uuid[]) WITH ORDINALITY AS u(event_id, position)
            GROUP BY u.event_id
        ) o USING (event_id)
        ORDER BY o.position
        RETURNING event_id
        """,
        *(list(column) for column in zip(*rows, strict=True)),
    )
    return [(r["event_id"], first[r["event_id"]]) for r in inserted]
