"""Message vectors followed live: what the vectors' sink writes, and where it stores its offsets.

The vectors' sink (:mod:`engram.projections.messages.embedding_follower`) takes the same log entries as
the index (:class:`engram.projections.messages.store.LogEntry`, decoded and opened once by their
follower) and embeds the same messages; this module writes a batch's vectors into one
embedding generation (:mod:`engram.projections.messages.embeddings.store`'s tables, migration 0022) inside the sink's
transaction, which also stores the offset past them, so a killed follower neither loses nor
doubles a vector, and a new generation replays the log from offset 0.

Vectors are shared by every projection generation (``public.embedding_vector``, keyed by
embedding generation and by the message's ``event_id:ordinal``): the log's messages are the
same whatever policy formed beliefs from them, so re-derivation does not re-embed. The stored
offsets are shared the same way (``public.projector_offset``, projector ``embeddings/<name>``).
A projection generation's recall joins the dense hits with its own index of messages, so it
answers only with messages that generation holds.

What must not be embedded is left out as the index leaves it out, under the principal's lock
(:mod:`engram.projections.principal_lock`): a message named in ``message_hidden`` (a deleted belief
quoted it; the deletion also removes any vector already written, :func:`delete_message_vectors`)
or a forgotten principal's (``principal_tombstone``; a ``principal.forgotten`` record also
removes every vector of theirs at that point in the log).
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping, Sequence, Set

import asyncpg
import numpy as np

from engram.projections.erased import note_erased
from engram.projections.following import Batch, Tracking, write_tracked
from engram.projections.messages.embeddings import store
from engram.projections.messages.embeddings.embedder import Embedder, Vectors
from engram.projections.messages.embeddings.generation import EmbeddingGeneration
from engram.projections.messages.store import (
    LogEntry,
    LogRecord,
    MessageKey,
    MessageRow,
    changes_of,
    entry_of,
    lock_changes,
)

FOLLOWER_PREFIX = "embeddings/"


def follower_name(generation: str) -> str:
    """The follower's name in ``projector_offset`` for one embedding generation: each
    generation has offsets of its own, so a new one is built by replaying the log from 0."""
    return f"{FOLLOWER_PREFIX}{generation}"


def vectors_tracking(generation: str) -> Tracking:
    """Where a generation's vectors store their offsets: ``public.projector_offset`` (vectors
    are shared by every projection generation)."""
    return Tracking(follower_name(generation), table="public.projector_offset")


def message_of_item(item_id: str) -> tuple[uuid.UUID, int]:
    """The (event id, ordinal) a message's vector id names."""
    episode, _, ordinal = item_id.rpartition(":")
    return uuid.UUID(episode), int(ordinal)


async def embedded_offsets(
    db: asyncpg.Pool | asyncpg.Connection, topic: str, generation: str
) -> dict[int, int]:
    """The follower's stored offset of each partition of ``topic`` for ``generation``."""
    return await vectors_tracking(generation).stored_offsets(db, topic)


_INSERT = """
INSERT INTO public.embedding_vector (generation, tenant, principal, kind, item_id, vector)
SELECT $1, v.tenant, v.principal, 'message', v.episode_id::text || ':' || v.ordinal, v.vector
FROM unnest($2::text[], $3::text[], $4::uuid[], $5::int[], $6::bytea[])
     AS v(tenant, principal, episode_id, ordinal, vector)
WHERE NOT EXISTS (SELECT 1 FROM message_hidden h
                  WHERE h.tenant = v.tenant AND h.principal = v.principal
                    AND h.episode_id = v.episode_id AND h.message_ordinal = v.ordinal)
  AND NOT EXISTS (SELECT 1 FROM principal_tombstone t
                  WHERE t.principal_hash = encode(sha256(convert_to(
                      v.tenant || '/' || v.principal, 'UTF8')), 'hex'))
  AND NOT EXISTS (SELECT 1 FROM public.principal_forgotten f
                  WHERE f.principal_hash = encode(sha256(convert_to(
                      v.tenant || '/' || v.principal, 'UTF8')), 'hex'))
ON CONFLICT (generation, tenant, principal, kind, item_id) DO UPDATE SET vector = EXCLUDED.vector
"""
"""Vectors of the messages that are neither hidden nor a forgotten principal's (the same test
as the index's insert); a vector already there is replaced (a record read twice gets the same
one)."""


def _of_roles(rows: Sequence[MessageRow], roles: Set[str] | None) -> list[MessageRow]:
    """The rows whose role is one of ``roles`` (None: every row)."""
    return list(rows) if roles is None else [r for r in rows if r.role in roles]


async def embed_entries(
    embedder: Embedder,
    generation: EmbeddingGeneration,
    entries: Sequence[LogEntry],
    roles: Set[str] | None = None,
) -> dict[MessageKey, Vectors]:
    """Every message of ``entries`` (of ``roles``; None: every role) embedded through the
    generation's text recipe, by key. No connection is involved: the vectors' sink calls it
    before its transaction (a remote embedder is a network call)."""
    rows = _of_roles(changes_of(entries).rows, roles)
    if not rows:
        return {}
    if (embedder.model.name, embedder.model.dimensions) != (
        generation.model,
        generation.dimensions,
    ):
        raise store.VectorSizeMismatch(
            f"embedder {embedder.model} does not make generation {generation.name!r}'s vectors"
        )
    matrix = await embedder.embed([generation.prepare(r.content) for r in rows], "document")
    if matrix.shape != (len(rows), generation.dimensions):
        raise store.VectorSizeMismatch(
            f"the embedder returned {matrix.shape} for {len(rows)} texts of {generation.name!r}"
        )
    return {
        MessageKey(r.tenant, r.principal, r.episode_id, r.message_ordinal): matrix[i]
        for i, r in enumerate(rows)
    }


async def write_entry_vectors(
    conn: asyncpg.Connection,
    generation: str,
    entries: Sequence[LogEntry],
    vectors: Mapping[MessageKey, Vectors],
    roles: Set[str] | None = None,
) -> int:
    """Write the vectors of ``entries``' messages of ``roles`` (None: every role; ``vectors``
    made from them or from a batch that holds them) inside a transaction, their principals
    locked first; a ``principal.forgotten`` entry removes the principal's vectors of every
    generation. How many messages it read (written or left out, another role's included)."""
    changes = changes_of(entries)
    await lock_changes(conn, changes)
    # An event appended twice (a retried publish) is one message: one upsert may not touch
    # a row twice, and the vectors are the same.
    keys = list(
        dict.fromkeys(
            MessageKey(r.tenant, r.principal, r.episode_id, r.message_ordinal)
            for r in _of_roles(changes.rows, roles)
        )
    )
    if keys:
        rows = [np.ascontiguousarray(vectors[k], dtype="<f4").tobytes() for k in keys]
        columns = [list(column) for column in zip(*keys, strict=True)]
        await conn.execute(_INSERT, generation, *columns, rows)
    for tenant, principal in changes.forgotten:
        removed = await store.forget_principal(conn, tenant, principal)
        await note_erased(conn, tenant, principal, {"embedding_vector": removed})
    return len(changes.rows)


async def embed_messages(
    embedder: Embedder,
    generation: EmbeddingGeneration,
    records: Sequence[LogRecord],
    roles: Set[str] | None = None,
) -> dict[MessageKey, Vectors]:
    """:func:`embed_entries` of plaintext records (of ``roles``; None: every role): for writers
    outside a follower (a bench, the recall evaluation)."""
    return await embed_entries(embedder, generation, [entry_of(r) for r in records], roles)


async def write_vectors(
    conn: asyncpg.Connection,
    generation: str,
    topic: str,
    partition: int,
    records: Sequence[LogRecord],
    vectors: Mapping[MessageKey, Vectors],
    roles: Set[str] | None = None,
) -> int:
    """Write the vectors of ``records``' messages (one partition's plaintext records in offset
    order, ``vectors`` from :func:`embed_messages` of them) and store the offset past the last,
    in one transaction, as the vectors' sink does; records below the stored offset were
    written already and are skipped. For writers outside a follower."""
    if not records:
        return 0
    batch = Batch(topic, partition, [entry_of(r) for r in records], records[-1].offset + 1)

    async def write(unread: Batch[LogEntry]) -> int:
        return await write_entry_vectors(conn, generation, unread.records, vectors, roles)

    return await write_tracked(conn, vectors_tracking(generation), batch, write)
