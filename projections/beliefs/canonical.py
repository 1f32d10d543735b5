"""Resolving a chunk as if every principal's batches had arrived in canonical order
(:mod:`engram.resolution.ordering`), in stages, each a function below:

1. **Unapplied** (:func:`unapplied`): leave out batches whose run is stored (a redelivery) and
   second copies within the chunk.
2. **Rewind** (:func:`rewind`): find the principals with a new batch that belongs before one
   already applied, note the rows each new deletion removes (before the undo can empty
   them), and undo what resolving those principals again replaces — only the applied batches
   after the earliest new one (:mod:`engram.resolution.undo`), or, for a deletion (or batches
   kept before undo records existed), every projected row of the principal. The undone
   batches come back as ``kept``, to be resolved again.
3. **Load** (:func:`engram.projections.beliefs.state.load_state`): read the rows the batches to
   resolve consult, now that the undone rows are gone. The tombstones read here are what the
   next stage needs.
4. **Redact** (:func:`engram.resolution.ordering.chunk_order`): put each principal's batches in
   canonical order without the words of content the principal deleted, so a re-resolution never
   reads them again.
5. **Hide** (:func:`hide_redacted`): take the messages whose words redaction took out of the
   index of messages too.
6. **Resolve** (:func:`engram.resolution.chunk.resolve_chunk`): the pure core, in memory.
7. **Formed** (:func:`formed_episodes`): every fresh record's episode is formed now.
8. **Keep** (:func:`keep`): keep each batch resolved with its undo record in
   ``claims_history``, for the next rewind.

The order is forced: the rewind decides which kept batches are resolved again and must undo
their rows before the state is loaded (else resolution would see what it is about to redo);
redaction needs the tombstones the load reads; hiding needs the same tombstones and the raw
batches; what is kept is what resolution applied.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping, Sequence

import asyncpg

from engram.projections.beliefs.claims_history import (
    empty_principals,
    keep_batches,
    kept_after,
    kept_batches,
    last_applied,
    undo_suffixes,
)
from engram.projections.beliefs.state import load_state
from engram.projections.messages import hide_messages, redacted_messages
from engram.resolution.beliefs import Changes, EpisodeFormed
from engram.resolution.chunk import BatchOutcome, resolve_chunk
from engram.resolution.ordering import (
    PrincipalKey,
    chunk_order,
    principal_of,
    principals_to_rewind,
    rewind_points,
)
from engram.schemas.claims import ClaimsBatchFormed
from engram.schemas.corrections import BeliefDeleted

Deleting = dict[tuple[str, str, str], list[uuid.UUID]]
"""Per deleted content (tenant, principal, content hash), the belief rows it removes."""


async def resolve_in_canonical_order(
    conn: asyncpg.Connection,
    fresh: Sequence[ClaimsBatchFormed],
    wire: Mapping[int, bytes] | None = None,
) -> tuple[Changes, list[BatchOutcome]]:
    """Resolve ``fresh`` through the stages of this module. The changes carry the memory
    events of every batch resolved, so what a rewind changes is published (an event already
    queued keeps its row: its id is stable); the outcomes follow ``fresh``. ``wire`` maps a
    fresh batch object (by ``id``) to the bytes it was decoded from, kept as its payload when
    resolution applied that very object (not a redacted copy, nor a kept batch read back)."""
    todo = await unapplied(conn, fresh)
    rewound, kept, deleting = await rewind(conn, todo)
    # None of these is applied: ``todo`` was just checked, and ``kept``'s runs were undone.
    state = await load_state(conn, chunk_order(todo, rewound, kept, ()))
    state.deleting = deleting
    ordered = chunk_order(todo, rewound, kept, state.tombstones)
    await hide_redacted(conn, [*kept, *todo], state.tombstones)
    changes, outcomes = resolve_chunk(state, ordered)
    changes.formed = formed_episodes(fresh)
    await keep(conn, fresh, ordered, outcomes, wire or {})
    return changes, _outcomes_of(fresh, ordered, outcomes)


async def unapplied(
    conn: asyncpg.Connection, fresh: Sequence[ClaimsBatchFormed]
) -> list[ClaimsBatchFormed]:
    """``fresh`` without the batches whose run is stored and without second copies. A run
    counts as this batch's only within its principal (an index probe by run id, the owner
    compared here, so the plan stays the primary key's whatever the statistics)."""
    owners = {(b.batch_id, b.tenant, b.principal) for b in fresh}
    applied = {
        row["run_id"]
        for row in await conn.fetch(
            "SELECT run_id, tenant, principal FROM consolidation_run "
            "WHERE run_id = ANY($1::uuid[])",
            [b.batch_id for b in fresh],
        )
        if (row["run_id"], row["tenant"], row["principal"]) in owners
    }
    return list({b.batch_id: b for b in fresh if b.batch_id not in applied}.values())


async def rewind(
    conn: asyncpg.Connection, todo: Sequence[ClaimsBatchFormed]
) -> tuple[set[PrincipalKey], list[ClaimsBatchFormed], Deleting]:
    """Undo what resolving ``todo`` in canonical order replaces: the principals rewound, the
    kept batches to resolve again, and the rows each deletion in ``todo`` removes (read before
    the undo empties their principals)."""
    rewound = principals_to_rewind(todo, await last_applied(conn, {principal_of(b) for b in todo}))
    deleting = await deleted_rows(conn, todo)
    kept = await undo_for_rewind(conn, todo, rewound)
    return rewound, kept, deleting


async def deleted_rows(conn: asyncpg.Connection, todo: Sequence[ClaimsBatchFormed]) -> Deleting:
    """The belief rows each deletion in ``todo`` removes, as they stand before the chunk
    (current and past values of the content), oldest first: what it announces as
    ``memory.deleted`` (:attr:`engram.resolution.beliefs.BeliefState.deleting`)."""
    keys = sorted(
        {
            (b.tenant, b.principal, b.correction.content_hash)
            for b in todo
            if isinstance(b.correction, BeliefDeleted)
        }
    )
    if not keys:
        return {}
    rows = await conn.fetch(
        """
        SELECT b.tenant, b.principal, b.content_hash, b.belief_id FROM belief b
        JOIN unnest($1::text[], $2::text[], $3::text[]) AS h(tenant, principal, content_hash)
          ON (b.tenant, b.principal, b.content_hash) = (h.tenant, h.principal, h.content_hash)
        ORDER BY b.valid_from, b.belief_id
        """,
        *(list(column) for column in zip(*keys, strict=True)),
    )
    deleting: Deleting = {}
    for row in rows:
        key = (row["tenant"], row["principal"], row["content_hash"])
        deleting.setdefault(key, []).append(row["belief_id"])
    return deleting


async def undo_for_rewind(
    conn: asyncpg.Connection, todo: Sequence[ClaimsBatchFormed], rewound: set[PrincipalKey]
) -> list[ClaimsBatchFormed]:
    """Undo what resolving ``rewound``'s principals again replaces; the kept batches to resolve
    again. A principal is undone from its rewind point (its suffix) when every batch of the
    suffix has an undo record, and emptied otherwise."""
    points = rewind_points(todo, rewound)
    suffixes = await kept_after(
        conn, {who: point for who, point in points.items() if point is not None}
    )
    undoable = {
        who: [(b, u) for b, u in suffix if u is not None]
        for who, suffix in suffixes.items()
        if all(u is not None for _, u in suffix)
    }
    whole = rewound - undoable.keys()
    await undo_suffixes(conn, undoable)
    kept = [b for suffix in undoable.values() for b, _ in suffix]
    kept += await kept_batches(conn, whole)
    await empty_principals(conn, whole)
    return kept


async def hide_redacted(
    conn: asyncpg.Connection,
    raw: Sequence[ClaimsBatchFormed],
    tombstones: set[tuple[str, str, str]],
) -> None:
    """What redaction takes from ``raw`` (the batches to resolve, unredacted) leaves the index
    of messages too: the messages' ids and the quotes taken."""
    hidden, quotes = redacted_messages(raw, tombstones)
    await hide_messages(conn, hidden, quotes=quotes)


def formed_episodes(fresh: Sequence[ClaimsBatchFormed]) -> list[EpisodeFormed]:
    """Every fresh record's episode, once a position: formed now — a copy already applied
    (redelivered, or appended twice) included — while no kept batch's episode needs marking
    again."""
    positions = {(b.source.topic, b.source.partition, b.source.offset): b.source for b in fresh}
    return [EpisodeFormed(s.topic, s.partition, s.offset) for s in positions.values()]


async def keep(
    conn: asyncpg.Connection,
    fresh: Sequence[ClaimsBatchFormed],
    ordered: Sequence[ClaimsBatchFormed],
    outcomes: Sequence[BatchOutcome],
    wire: Mapping[int, bytes],
) -> None:
    """Keep every batch resolution applied with its undo record; a fresh batch applied as
    decoded (not a redacted copy) keeps the bytes it was decoded from."""
    alive = {id(b): b for b in fresh}
    await keep_batches(
        conn,
        [
            (b, o.undo, wire.get(id(b)) if alive.get(id(b)) is b else None)
            for b, o in zip(ordered, outcomes, strict=True)
            if not o.skipped
        ],
    )


def _outcomes_of(
    fresh: Sequence[ClaimsBatchFormed],
    ordered: Sequence[ClaimsBatchFormed],
    outcomes: Sequence[BatchOutcome],
) -> list[BatchOutcome]:
    """The outcome of each fresh batch, in ``fresh``'s order; a second copy is skipped."""
    by_id: dict[uuid.UUID, BatchOutcome] = {}
    for batch, outcome in zip(ordered, outcomes, strict=True):
        if not outcome.skipped:
            by_id.setdefault(batch.batch_id, outcome)
    return [by_id.pop(b.batch_id, BatchOutcome(skipped=True)) for b in fresh]
