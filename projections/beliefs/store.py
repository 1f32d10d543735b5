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
from engram.keys.store import destroy_data_key
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
from engram.schemas.common import PSEUDONYMOUS, day_of, principal_hash, principal_key
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
        await _shred_forgotten(conn, fresh)
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


async def _shred_forgotten(conn: asyncpg.Connection, batches: Sequence[ClaimsBatchFormed]) -> None:
    """A forgotten principal keeps no data key: what they say afterwards forms nothing (their
    batches are dropped), and a key made for it — by a door, or by formation sealing a batch
    of theirs in a replay, where the forgetting's pseudonym maps to nobody — would be a row
    naming them. Destroyed in the transaction that drops the batch, as a forgetting does."""
    principals = {principal_hash(b.tenant, b.principal): (b.tenant, b.principal) for b in batches}
    if not principals:
        return
    rows = await conn.fetch(
        "SELECT principal_hash FROM principal_tombstone WHERE principal_hash = ANY($1::text[]) "
        "UNION SELECT principal_hash FROM public.principal_forgotten "
        "WHERE principal_hash = ANY($1::text[]) ORDER BY 1",
        list(principals),
    )
    for row in rows:
        await destroy_data_key(conn, *principals[row["principal_hash"]])


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
        [kept_of(row) for row in changes.principal_tombstones],
        columns=_PRINCIPAL_TOMBSTONE_COLUMNS,
    )
    # After the forgetting, which deleted the principal's queued events with their other rows.
    return queued + await _record_in_outbox(conn, erasure_notices(changes))


def kept_of(tombstone: PrincipalTombstoneRow) -> PrincipalTombstoneRow:
    """The tombstone as it is stored: the hash and the day, no event id (migration 0045). The
    forgetting's record on the log names the principal's pseudonym, so its id or its exact time
    beside the hash would let whoever knows the name find that record, and with the pseudonym
    every record of theirs."""
    return PrincipalTombstoneRow(tombstone.principal_hash, None, day_of(tombstone.forgotten_at))


def _owner(event: MemoryChanged | PrincipalErased) -> str:
    """The outbox row's principal (and so the record's key): a forgotten principal's notice
    has only their hash, which is what its row keeps."""
    return event.principal if isinstance(event, MemoryChanged) else event.principal_hash


async def _pseudonyms(
    conn: asyncpg.Connection, events: Sequence[MemoryChanged | PrincipalErased]
) -> dict[tuple[str, str], str]:
    """The pseudonyms of the principals ``events`` are about, where they have a data key (the
    log is sealed for them): their memory events name them so on the topic."""
    who = sorted({(e.tenant, e.principal) for e in events if isinstance(e, MemoryChanged)})
    if not who:
        return {}
    rows = await conn.fetch(
        "SELECT k.tenant, k.principal, k.pseudonym FROM public.data_key k "
        "JOIN unnest($1::text[], $2::text[]) AS w(tenant, principal) "
        "ON k.tenant = w.tenant AND k.principal = w.principal",
        [tenant for tenant, _ in who],
        [principal for _, principal in who],
    )
    return {(r["tenant"], r["principal"]): r["pseudonym"] for r in rows}


def _on_topic(event: MemoryChanged | PrincipalErased, named: dict[tuple[str, str], str]) -> str:
    """The event's JSON as the outbox keeps and the topic carries it: a memory event of a
    principal with a data key names their pseudonym (version 2), never their identifier."""
    if isinstance(event, MemoryChanged):
        pseudonym = named.get((event.tenant, event.principal))
        if pseudonym is not None:
            event = event.model_copy(
                update={"principal": pseudonym, "schema_version": PSEUDONYMOUS}
            )
    return event.model_dump_json()


_ERASED = uuid.UUID("5d6f0b52-4f1e-5a43-9c7e-2b8f3c1d9a60")
"""Namespace of the ids of ``principal.forgotten`` events."""


def erasure_notices(changes: Changes) -> list[PrincipalErased]:
    """A ``principal.forgotten`` event for each principal the chunk forgot, naming them only by
    their tombstone's hash. It names no record of the log: the forgetting's record names their
    pseudonym, so its id, or its exact time, beside the hash would link the two; its id is a
    name of the hash and the day, so a redelivery queues it once. The projector publishes it
    like any memory event, and the notifier tells the tenant's endpoints."""
    tombstones = {row.principal_hash: row for row in changes.principal_tombstones}
    notices = []
    for tenant, principal in changes.forgotten:
        tombstone = tombstones[principal_hash(tenant, principal)]
        day = day_of(tombstone.forgotten_at)
        notices.append(
            PrincipalErased(
                schema_version=PSEUDONYMOUS,
                event_id=uuid.uuid5(_ERASED, f"{tenant}/{tombstone.principal_hash}/{day.date()}"),
                tenant=tenant,
                principal_hash=tombstone.principal_hash,
                occurred_at=day,
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
    named = await _pseudonyms(conn, events)
    rows = [(e.event_id, e.tenant, _owner(e), _on_topic(e, named)) for e in events]
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
