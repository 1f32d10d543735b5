"""Embedding generations and vectors on the real PostgreSQL: built, activated atomically, never
mixed, scoped to one principal, refused clearly when not built, and deleted with what they
embed."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Sequence

import asyncpg
import numpy as np
import pytest

from engram.projections.messages.embeddings import store
from engram.projections.messages.embeddings.embedder import unit_rows
from engram.projections.messages.embeddings.generation import EmbeddingGeneration
from engram.projections.messages.embeddings.local import WordLlamaEmbedder
from engram.projections.messages.embeddings.store import (
    EmbeddingGenerationError,
    EmbeddingGenerationNotBuilt,
    Item,
    NoActiveEmbeddingGeneration,
    UnknownEmbeddingGeneration,
    VectorSizeMismatch,
)

pytestmark = pytest.mark.integration

SMALL = EmbeddingGeneration("toy", 3, "plain-v1")
OTHER = EmbeddingGeneration("toy", 2, "plain-v1")
T, P = "tenant-a", "ana"


def unit(*rows: Sequence[float]) -> np.ndarray:
    matrix = np.array(rows, dtype=np.float32)
    return unit_rows(matrix, dimensions=matrix.shape[1])


async def built(conn: asyncpg.Connection, generation: EmbeddingGeneration) -> None:
    await store.register(conn, generation)
    await store.mark_built(conn, generation.name)


async def test_a_generation_is_searchable_only_once_built(pool: asyncpg.Pool) -> None:
    async with pool.acquire() as conn:
        row = await store.register(conn, SMALL)
        assert (row.name, row.status) == ("toy/3/plain-v1", "building")
        await store.put_vectors(conn, SMALL.name, T, P, "message", ["m1"], unit([1, 0, 0]))
        with pytest.raises(EmbeddingGenerationNotBuilt, match="still being built"):
            await store.search(conn, T, P, "message", unit([1, 0, 0])[0], generation=SMALL.name)
        with pytest.raises(EmbeddingGenerationNotBuilt):
            await store.activate(conn, SMALL.name)
        with pytest.raises(NoActiveEmbeddingGeneration, match="no embedding generation is active"):
            await store.search(conn, T, P, "message", unit([1, 0, 0])[0])
        with pytest.raises(UnknownEmbeddingGeneration, match="'nope'"):
            await store.search(conn, T, P, "message", unit([1, 0, 0])[0], generation="nope")
        await store.mark_built(conn, SMALL.name)
        found = await store.search(conn, T, P, "message", unit([1, 0, 0])[0], generation=SMALL.name)
        assert [h.item_id for h in found.hits] == ["m1"] and found.generation == SMALL.name
        assert (await store.register(conn, SMALL)).status == "built", "registering is idempotent"


async def test_search_ranks_by_cosine_breaks_ties_by_id_and_keeps_to_the_principal(
    pool: asyncpg.Pool,
) -> None:
    async with pool.acquire() as conn:
        await built(conn, SMALL)
        vectors = unit([1, 0, 0], [0, 1, 0], [1, 1, 0], [1, 0, 0], [0, 0, 1])
        await store.put_vectors(
            conn, SMALL.name, T, P, "message", ["e", "b", "c", "a", "d"], vectors
        )
        await store.put_vectors(conn, SMALL.name, T, "bo", "message", ["x"], unit([1, 0, 0]))
        await store.put_vectors(conn, SMALL.name, "tenant-b", P, "message", ["y"], unit([1, 0, 0]))
        await store.put_vectors(conn, SMALL.name, T, P, "belief", ["z"], unit([1, 0, 0]))
        await store.activate(conn, SMALL.name)
        found = await store.search(conn, T, P, "message", unit([1, 0, 0])[0], limit=3)
    assert [h.item_id for h in found.hits] == ["a", "e", "c"]
    assert found.hits[0].score == pytest.approx(1.0) and found.hits[2].score == pytest.approx(
        2**-0.5
    )
    assert found.searched == 5, "only this principal's messages are compared"


async def test_activation_is_atomic_and_a_search_never_mixes_two_generations(
    pool: asyncpg.Pool,
) -> None:
    async with pool.acquire() as conn:
        await built(conn, SMALL)
        await built(conn, OTHER)
        await store.put_vectors(conn, SMALL.name, T, P, "message", ["s"], unit([1, 0, 0]))
        await store.put_vectors(
            conn, OTHER.name, T, P, "message", ["o1", "o2"], unit([1, 0], [0, 1])
        )
        first = await store.activate(conn, SMALL.name)
        assert first.status == "active" and first.activated_at is not None
        found = await store.search(conn, T, P, "message", unit([1, 0, 0])[0])
        assert found.generation == SMALL.name and [h.item_id for h in found.hits] == ["s"]
        with pytest.raises(VectorSizeMismatch, match="size 2"):
            await store.search(conn, T, P, "message", unit([1, 0])[0])
        await store.activate(conn, OTHER.name)
        statuses = {g.name: g.status for g in await store.list_generations(conn)}
        assert statuses == {SMALL.name: "built", OTHER.name: "active"}
        found = await store.search(conn, T, P, "message", unit([0, 1])[0])
        assert found.generation == OTHER.name and [h.item_id for h in found.hits] == ["o2", "o1"]


async def test_concurrent_activations_leave_exactly_one_active(pool: asyncpg.Pool) -> None:
    generations = [EmbeddingGeneration("toy", size, "plain-v1") for size in (2, 3, 4, 5)]
    async with pool.acquire() as conn:
        for generation in generations:
            await built(conn, generation)

    async def activate(name: str) -> None:
        async with pool.acquire() as conn:
            await store.activate(conn, name)

    await asyncio.gather(*(activate(g.name) for g in generations))
    async with pool.acquire() as conn:
        statuses = [g.status for g in await store.list_generations(conn)]
    assert statuses.count("active") == 1 and statuses.count("built") == 3


async def test_vectors_of_the_wrong_size_or_for_no_generation_are_refused(
    pool: asyncpg.Pool,
) -> None:
    async with pool.acquire() as conn:
        await store.register(conn, SMALL)
        with pytest.raises(VectorSizeMismatch, match=r"\(1, 3\) matrix"):
            await store.put_vectors(conn, SMALL.name, T, P, "message", ["m"], unit([1, 0]))
        with pytest.raises(UnknownEmbeddingGeneration):
            await store.put_vectors(conn, "nope", T, P, "message", ["m"], unit([1, 0, 0]))
        with pytest.raises(asyncpg.CheckViolationError):
            await store.put_vectors(
                conn,
                SMALL.name,
                T,
                P,
                "turn",  # type: ignore[arg-type]
                ["m"],
                unit([1, 0, 0]),
            )


async def test_deleting_items_and_forgetting_a_principal_reach_every_generation(
    pool: asyncpg.Pool,
) -> None:
    async with pool.acquire() as conn:
        for generation, vector in ((SMALL, unit([1, 0, 0])), (OTHER, unit([1, 0]))):
            await built(conn, generation)
            for principal in (P, "bo"):
                await store.put_vectors(
                    conn, generation.name, T, principal, "message", ["m1"], vector
                )
                await store.put_vectors(
                    conn, generation.name, T, principal, "belief", ["b1"], vector
                )
        assert await store.delete_items(conn, T, P, "belief", ["b1"]) == 2
        assert await store.forget_principal(conn, T, "bo") == 4
        left = await conn.fetch(
            "SELECT generation, principal, kind, item_id FROM embedding_vector ORDER BY 1"
        )
    assert [tuple(r) for r in left] == [
        (OTHER.name, P, "message", "m1"),
        (SMALL.name, P, "message", "m1"),
    ]


async def test_an_active_generation_cannot_be_dropped_and_a_dropped_one_takes_its_vectors(
    pool: asyncpg.Pool,
) -> None:
    async with pool.acquire() as conn:
        await built(conn, SMALL)
        await built(conn, OTHER)
        await store.put_vectors(conn, OTHER.name, T, P, "message", ["m"], unit([1, 0]))
        await store.activate(conn, OTHER.name)
        with pytest.raises(EmbeddingGenerationError, match="is active"):
            await store.drop(conn, OTHER.name)
        await store.activate(conn, SMALL.name)
        await store.drop(conn, OTHER.name)
        assert await conn.fetchval("SELECT count(*) FROM embedding_vector") == 0
        assert await store.get(conn, OTHER.name) is None


async def batches(items: Sequence[Item], size: int) -> AsyncIterator[Sequence[Item]]:
    for start in range(0, len(items), size):
        yield items[start : start + size]


async def test_a_backfill_with_the_local_model_builds_a_generation_that_finds_by_meaning(
    pool: asyncpg.Pool,
) -> None:
    embedder = WordLlamaEmbedder(256)
    generation = EmbeddingGeneration.of(embedder.model)
    said = {
        "t1:0": "I started learning the violin last spring",
        "t2:0": "Our kitchen sink is leaking again",
        "t3:0": "My brother moved to Toronto for work",
        "t4:0": "I adopted a small grey kitten",
    }
    items = [Item(T, P, "message", key, text) for key, text in said.items()]
    items.append(Item(T, "bo", "message", "t9:0", "I play the cello in an orchestra"))
    assert await store.backfill(pool, embedder, generation, batches(items, 2)) == 5
    async with pool.acquire() as conn:
        assert (await store.get(conn, generation.name)).status == "built"  # type: ignore[union-attr]
        await store.activate(conn, generation.name)
        asked = await embedder.embed([generation.prepare("Which instrument do I play?")])
        music = await store.search(conn, T, P, "message", asked[0], limit=1)
        asked = await embedder.embed([generation.prepare("Do I have a pet?")])
        pet = await store.search(conn, T, P, "message", asked[0], limit=1)
    assert [h.item_id for h in music.hits] == ["t1:0"], "bo's cello is not Ana's"
    assert [h.item_id for h in pet.hits] == ["t4:0"]
    assert music.searched == 4
