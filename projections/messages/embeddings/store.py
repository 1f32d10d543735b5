"""Embedding generations and their vectors in PostgreSQL (migration 0022), and exact search.

A generation goes ``building`` → ``built`` → ``active`` (and back to ``built`` when another is
activated). Vectors may be written in any state — a built or active generation is followed
live — but a search reads only a generation that is ``built`` or ``active``: a query against one
still ``building`` raises :class:`EmbeddingGenerationNotBuilt`, one that does not exist
:class:`UnknownEmbeddingGeneration`, and a search that names none when none is active
:class:`NoActiveEmbeddingGeneration`. Each says so in words a caller can show.

Search is exact cosine similarity over one principal's vectors of one kind in one generation:
one statement resolves the generation and reads that principal's ids and vector bytes (one
snapshot, so a concurrent activation is seen entirely or not at all, never a mix), and numpy
scores them with one matrix-vector product. There is no pgvector on the server this was
built on; where exact search stops meeting the read target is measured in docs/benchmarks.md
(``bench/embedding_search.py``). Every function takes the tenant and principal it is scoped to.
"""

from __future__ import annotations

from collections.abc import AsyncIterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Literal

import asyncpg
import numpy as np

from engram.infra.errors import EngramFailure
from engram.projections.messages.embeddings.embedder import Embedder, Vectors
from engram.projections.messages.embeddings.generation import EmbeddingGeneration

Kind = Literal["belief", "message"]
Status = Literal["building", "built", "active"]


class EmbeddingGenerationError(EngramFailure, LookupError):
    """A search or write named an embedding generation it cannot use."""

    code = "embedding_generation_invalid"


class UnknownEmbeddingGeneration(EmbeddingGenerationError):
    code = "embedding_generation_unknown"

    def __init__(self, name: str) -> None:
        super().__init__(f"there is no embedding generation {name!r}")


class NoActiveEmbeddingGeneration(EmbeddingGenerationError):
    code = "embedding_generation_none_active"
    retriable = True
    exit_code = 1

    def __init__(self) -> None:
        super().__init__(
            "no embedding generation is active: build one and activate it before searching "
            "by meaning"
        )


class EmbeddingGenerationNotBuilt(EmbeddingGenerationError):
    code = "embedding_generation_not_built"
    retriable = True
    exit_code = 1

    def __init__(self, name: str) -> None:
        super().__init__(
            f"embedding generation {name!r} is still being built: it cannot be searched or "
            "activated until it is marked built"
        )
        self.name = name


class VectorSizeMismatch(EngramFailure, ValueError):
    """A vector's size is not its generation's."""

    code = "embedding_vector_size_mismatch"


@dataclass(frozen=True, slots=True)
class GenerationRow:
    name: str
    model: str
    dimensions: int
    recipe: str
    status: Status
    created_at: datetime
    built_at: datetime | None
    activated_at: datetime | None


@dataclass(frozen=True, slots=True)
class Hit:
    item_id: str
    score: float
    """Cosine similarity, -1 … 1."""


@dataclass(frozen=True, slots=True)
class Similar:
    """What a search found, and in which generation (every hit is from that one)."""

    generation: str
    hits: tuple[Hit, ...]
    searched: int
    """How many vectors were compared."""


@dataclass(frozen=True, slots=True)
class Item:
    """One text to embed for one principal: a message (``event_id:ordinal``) or a belief."""

    tenant: str
    principal: str
    kind: Kind
    item_id: str
    text: str


_COLUMNS = "name, model, dimensions, recipe, status, created_at, built_at, activated_at"


def _row(record: asyncpg.Record) -> GenerationRow:
    return GenerationRow(**dict(record))


async def register(conn: asyncpg.Connection, generation: EmbeddingGeneration) -> GenerationRow:
    """The generation's row, created ``building`` if it is new (idempotent)."""
    await conn.execute(
        "INSERT INTO embedding_generation (name, model, dimensions, recipe) "
        "VALUES ($1, $2, $3, $4) ON CONFLICT (name) DO NOTHING",
        generation.name,
        generation.model,
        generation.dimensions,
        generation.recipe,
    )
    found = await get(conn, generation.name)
    assert found is not None  # inserted or already there; rows are never deleted but by drop
    return found


async def get(conn: asyncpg.Connection, name: str) -> GenerationRow | None:
    record = await conn.fetchrow(
        f"SELECT {_COLUMNS} FROM embedding_generation WHERE name = $1", name
    )
    return None if record is None else _row(record)


async def list_generations(conn: asyncpg.Connection) -> list[GenerationRow]:
    records = await conn.fetch(f"SELECT {_COLUMNS} FROM embedding_generation ORDER BY name")
    return [_row(r) for r in records]


async def active(conn: asyncpg.Connection) -> GenerationRow | None:
    record = await conn.fetchrow(
        f"SELECT {_COLUMNS} FROM embedding_generation WHERE status = 'active'"
    )
    return None if record is None else _row(record)


async def put_vectors(
    conn: asyncpg.Connection,
    generation: str,
    tenant: str,
    principal: str,
    kind: Kind,
    item_ids: Sequence[str],
    vectors: Vectors,
) -> int:
    """Insert or replace the vectors of these items of one principal; returns how many."""
    dimensions = await conn.fetchval(
        "SELECT dimensions FROM embedding_generation WHERE name = $1", generation
    )
    if dimensions is None:
        raise UnknownEmbeddingGeneration(generation)
    if vectors.shape != (len(item_ids), dimensions):
        raise VectorSizeMismatch(
            f"{len(item_ids)} items need a ({len(item_ids)}, {dimensions}) matrix for "
            f"{generation!r}, got {vectors.shape}"
        )
    rows = np.ascontiguousarray(vectors, dtype="<f4")
    await conn.executemany(
        "INSERT INTO embedding_vector (generation, tenant, principal, kind, item_id, vector) "
        "VALUES ($1, $2, $3, $4, $5, $6) "
        "ON CONFLICT (generation, tenant, principal, kind, item_id) "
        "DO UPDATE SET vector = EXCLUDED.vector",
        [
            (generation, tenant, principal, kind, item_id, rows[i].tobytes())
            for i, item_id in enumerate(item_ids)
        ],
    )
    return len(item_ids)


async def embed_items(
    conn: asyncpg.Connection,
    embedder: Embedder,
    generation: EmbeddingGeneration,
    items: Sequence[Item],
) -> int:
    """Embed ``items`` through the generation's text recipe and store their vectors, grouped by
    (tenant, principal, kind). The embedder must be the generation's model at its size."""
    if (embedder.model.name, embedder.model.dimensions) != (
        generation.model,
        generation.dimensions,
    ):
        raise VectorSizeMismatch(
            f"embedder {embedder.model} does not make generation {generation.name!r}'s vectors"
        )
    vectors = await embedder.embed([generation.prepare(item.text) for item in items], "document")
    groups: dict[tuple[str, str, Kind], list[int]] = {}
    for i, item in enumerate(items):
        groups.setdefault((item.tenant, item.principal, item.kind), []).append(i)
    async with conn.transaction():
        for (tenant, principal, kind), rows in groups.items():
            await put_vectors(
                conn,
                generation.name,
                tenant,
                principal,
                kind,
                [items[i].item_id for i in rows],
                vectors[rows],
            )
    return len(items)


async def backfill(
    pool: asyncpg.Pool,
    embedder: Embedder,
    generation: EmbeddingGeneration,
    batches: AsyncIterable[Sequence[Item]],
) -> int:
    """Build a generation from a replay of its sources: register it, embed every batch, and
    mark it built once the source is exhausted. A failure leaves it ``building`` (searches
    refuse it) and a rerun overwrites what was written, so a backfill can simply be retried."""
    async with pool.acquire() as conn:
        await register(conn, generation)
    written = 0
    async for batch in batches:
        async with pool.acquire() as conn:
            written += await embed_items(conn, embedder, generation, batch)
    async with pool.acquire() as conn:
        await mark_built(conn, generation.name)
    return written


async def mark_built(conn: asyncpg.Connection, name: str) -> None:
    """``building`` → ``built`` (a no-op for a generation already built or active)."""
    status = await conn.fetchval(
        "UPDATE embedding_generation SET status = 'built', built_at = now() "
        "WHERE name = $1 AND status = 'building' RETURNING status",
        name,
    )
    if status is None and await get(conn, name) is None:
        raise UnknownEmbeddingGeneration(name)


async def activate(conn: asyncpg.Connection, name: str) -> GenerationRow:
    """Make ``name`` the one active generation, in one transaction: the previous one goes back
    to ``built``. Refused for a generation still building or unknown."""
    async with conn.transaction():
        # Serialise activations: two at once would both demote, then one insert would fail on
        # the unique index instead of one of them simply winning.
        await conn.execute("LOCK TABLE embedding_generation IN SHARE ROW EXCLUSIVE MODE")
        found = await get(conn, name)
        if found is None:
            raise UnknownEmbeddingGeneration(name)
        if found.status == "building":
            raise EmbeddingGenerationNotBuilt(name)
        await conn.execute(
            "UPDATE embedding_generation SET status = 'built' "
            "WHERE status = 'active' AND name <> $1",
            name,
        )
        record = await conn.fetchrow(
            "UPDATE embedding_generation SET status = 'active', "
            "activated_at = CASE WHEN status = 'active' THEN activated_at ELSE now() END "
            f"WHERE name = $1 RETURNING {_COLUMNS}",
            name,
        )
    return _row(record)


async def drop(conn: asyncpg.Connection, name: str) -> None:
    """Delete a generation that is not active, with its vectors."""
    async with conn.transaction():
        found = await get(conn, name)
        if found is None:
            raise UnknownEmbeddingGeneration(name)
        if found.status == "active":
            raise EmbeddingGenerationError(
                f"embedding generation {name!r} is active: activate another before dropping it"
            )
        await conn.execute("DELETE FROM embedding_generation WHERE name = $1", name)


async def delete_items(
    conn: asyncpg.Connection, tenant: str, principal: str, kind: Kind, item_ids: Sequence[str]
) -> int:
    """Remove these items' vectors from every generation (a deleted belief, its messages)."""
    result = await conn.execute(
        "DELETE FROM embedding_vector "
        "WHERE tenant = $1 AND principal = $2 AND kind = $3 AND item_id = ANY($4::text[])",
        tenant,
        principal,
        kind,
        list(item_ids),
    )
    return int(result.rpartition(" ")[2])


async def forget_principal(conn: asyncpg.Connection, tenant: str, principal: str) -> int:
    """Remove every vector of one principal from every generation."""
    result = await conn.execute(
        "DELETE FROM embedding_vector WHERE tenant = $1 AND principal = $2", tenant, principal
    )
    return int(result.rpartition(" ")[2])


_SEARCH = """
SELECT g.name, g.dimensions, g.status, v.item_id, v.vector
FROM embedding_generation g
LEFT JOIN embedding_vector v
  ON v.generation = g.name AND v.tenant = $2 AND v.principal = $3 AND v.kind = $4
WHERE CASE WHEN $1::text IS NULL THEN g.status = 'active' ELSE g.name = $1 END
"""
"""One statement, so one snapshot: the generation it resolves and the vectors it reads are of the
same moment. Rows, not ``string_agg(… ORDER BY …)``: the ordered aggregate sorted (and spilled)
every search, five times slower at 10k vectors; ties are broken by id in Python instead."""


async def search(
    conn: asyncpg.Connection,
    tenant: str,
    principal: str,
    kind: Kind,
    query: Vectors,
    *,
    limit: int = 10,
    generation: str | None = None,
) -> Similar:
    """The ``limit`` items of one principal most similar to ``query`` (a unit vector made by
    the generation's model through its recipe), best first; ties by item id. ``generation``
    None reads the active one."""
    records = await conn.fetch(_SEARCH, generation, tenant, principal, kind)
    resolved = records[0] if records else None
    vector = searchable(resolved, generation, query)
    assert resolved is not None
    name, dimensions = resolved["name"], resolved["dimensions"]
    rows = [r for r in records if r["item_id"] is not None]  # the LEFT JOIN's empty row
    if not rows or limit < 1:
        return Similar(name, (), len(rows))
    ids: list[str] = [r["item_id"] for r in rows]
    matrix = np.frombuffer(b"".join(r["vector"] for r in rows), dtype="<f4")
    hits = rank(matrix.reshape(len(ids), dimensions), ids, vector, limit)
    return Similar(name, hits, searched=len(ids))


def searchable(resolved: asyncpg.Record | None, asked: str | None, query: Vectors) -> Vectors:
    """``query`` as a flat vector for the generation ``resolved`` (its ``name``,
    ``dimensions`` and ``status``, or None: no generation by the name ``asked``, or none active
    when ``asked`` is None), or the failure a search of it is: unknown, none active, still
    building, or a query of another size."""
    if resolved is None:
        if asked is None:
            raise NoActiveEmbeddingGeneration()
        raise UnknownEmbeddingGeneration(asked)
    name, dimensions = resolved["name"], resolved["dimensions"]
    if resolved["status"] == "building":
        raise EmbeddingGenerationNotBuilt(name)
    vector = np.asarray(query, dtype=np.float32).reshape(-1)
    if vector.shape != (dimensions,):
        raise VectorSizeMismatch(
            f"a query of size {vector.shape[0]} cannot search {name!r} ({dimensions})"
        )
    return vector


def rank(matrix: Vectors, ids: Sequence[str], query: Vectors, limit: int) -> tuple[Hit, ...]:
    """The ``limit`` rows of ``matrix`` (unit vectors, one per id) nearest ``query``, best
    first, ties by id. ``einsum`` rather than ``@``: a matrix-vector product through a
    multi-threaded BLAS was 2 to 30 times slower on a busy two-core server (threads contending with
    the event loop and each other, docs/benchmarks.md), and einsum runs on the calling thread."""
    scores = np.einsum("ij,j->i", matrix, query)
    if limit < len(ids):
        # Linear-time selection of the best ``limit``; every tie of the boundary score is kept
        # so that the order below breaks ties by item id, never by the order rows came in.
        kth = np.partition(-scores, limit - 1)[limit - 1]
        candidates: list[int] = np.flatnonzero(-scores <= kth).tolist()
    else:
        candidates = list(range(len(ids)))
    ordered = sorted(candidates, key=lambda i: (-float(scores[i]), ids[i]))[:limit]
    return tuple(Hit(ids[i], float(scores[i])) for i in ordered)
