"""Vectors held in memory stay in step with the table, on the real PostgreSQL: two processes'
holdings (two :class:`ResidentVectors`, as the API's and the MCP server's) answer as the exact
search of the table does, take in vectors written after they loaded, and drop a hidden
message's vector and a forgotten principal's at their next search; beyond the exact size an
HNSW graph answers, with exact scores, what the exact search answers."""

from __future__ import annotations

import asyncio

import asyncpg
import numpy as np
import pytest

from engram.projections.messages.embeddings import store
from engram.projections.messages.embeddings.embedder import unit_rows
from engram.projections.messages.embeddings.generation import EmbeddingGeneration
from engram.projections.messages.embeddings.resident import ResidentVectors
from tests.support.conditions import wait_until

pytestmark = pytest.mark.integration

GENERATION = EmbeddingGeneration("resident-test", 16, "plain-v1")
RNG = np.random.default_rng(7)


def vectors(count: int) -> np.ndarray:
    return unit_rows(RNG.standard_normal((count, 16)), dimensions=16)


async def written(conn: asyncpg.Connection, principal: str, start: int, count: int) -> None:
    ids = [f"m{i:05d}" for i in range(start, start + count)]
    await store.put_vectors(conn, GENERATION.name, "t", principal, "message", ids, vectors(count))


async def exact(
    conn: asyncpg.Connection, principal: str, query: np.ndarray, limit: int
) -> list[str]:
    found = await store.search(conn, "t", principal, "message", query, limit=limit)
    return [h.item_id for h in found.hits]


async def held(
    resident: ResidentVectors,
    conn: asyncpg.Connection,
    query: np.ndarray,
    limit: int,
    principal: str = "ana",
) -> list[str]:
    found = await resident.search(conn, "t", principal, "message", query, limit=limit)
    return [h.item_id for h in found.hits]


@pytest.fixture
async def active(pool: asyncpg.Pool) -> None:
    async with pool.acquire() as conn:
        await store.register(conn, GENERATION)
        await store.mark_built(conn, GENERATION.name)
        await store.activate(conn, GENERATION.name)


async def test_two_processes_follow_writes_deletions_and_forgetting(
    pool: asyncpg.Pool, active: None
) -> None:
    api, mcp = ResidentVectors(), ResidentVectors()
    query = vectors(1)[0]
    async with pool.acquire() as conn:
        await written(conn, "ana", 0, 50)
        await written(conn, "bo", 0, 50)
        assert await held(api, conn, query, 10) == await exact(conn, "ana", query, 10)
        assert api.holds(GENERATION.name, "t", "ana", "message") == 50
        await written(conn, "ana", 50, 30)  # after the API loaded: read as new rows
        assert await held(api, conn, query, 10) == await exact(conn, "ana", query, 10)
        assert await held(mcp, conn, query, 10) == await exact(conn, "ana", query, 10)
        assert api.holds(GENERATION.name, "t", "ana", "message") == 80

        nearest = (await exact(conn, "ana", query, 1))[0]
        await store.delete_items(conn, "t", "ana", "message", [nearest])  # a hidden message
        for process in (api, mcp):
            assert nearest not in await held(process, conn, query, 80)
            assert await held(process, conn, query, 10) == await exact(conn, "ana", query, 10)

        emptied = await conn.fetchval("SELECT count FROM embedding_vector_emptied")
        await store.forget_principal(conn, "t", "ana")
        assert await conn.fetchval("SELECT count FROM embedding_vector_emptied") == emptied + 1
        assert not await conn.fetchval(
            "SELECT count(*) FROM embedding_vector_epoch WHERE principal = 'ana'"
        ), "no name of a forgotten principal stays"
        for process in (api, mcp):
            assert await held(process, conn, query, 10) == []
            assert process.holds(GENERATION.name, "t", "ana", "message") == 0
        assert await held(api, conn, query, 5, "bo") == await exact(conn, "bo", query, 5)


async def test_beyond_the_exact_size_a_graph_answers_with_exact_scores(
    pool: asyncpg.Pool, active: None
) -> None:
    resident = ResidentVectors(exact_below=100)
    queries = vectors(20)
    async with pool.acquire() as conn:
        await written(conn, "ana", 0, 400)
        await held(resident, conn, queries[0], 10)  # loads, starts the graph

        def graphed() -> bool:
            return resident.graphed(GENERATION.name, "t", "ana", "message") == 400

        await wait_until(graphed, timeout_s=60, what="the graph is built")
        await written(conn, "ana", 400, 10)  # after the graph: scanned exactly beside it
        agree = 0
        for query in queries:
            ours = await resident.search(conn, "t", "ana", "message", query, limit=10)
            truth = await store.search(conn, "t", "ana", "message", query, limit=10)
            agree += len({h.item_id for h in ours.hits} & {h.item_id for h in truth.hits})
            exact_scores = {h.item_id: h.score for h in truth.hits}
            for hit in ours.hits:
                if hit.item_id in exact_scores:
                    assert hit.score == pytest.approx(exact_scores[hit.item_id], abs=1e-6)
        assert agree / (10 * len(queries)) >= 0.95
        newest = vectors(1)[0]
        await store.put_vectors(
            conn, GENERATION.name, "t", "ana", "message", ["m99999"], newest[None, :]
        )
        assert (await held(resident, conn, newest, 1))[0] == "m99999", "a row after the graph"


async def test_searched_off_the_event_loop_rewritten_vectors_answer_as_the_table(
    pool: asyncpg.Pool, active: None
) -> None:
    """A principal at or above ``off_loop_from`` is searched in a worker thread, several
    questions at once, and answers as the table does; a vector rewritten after the load is
    answered in its own row, not in another item's."""
    resident = ResidentVectors(off_loop_from=1)
    queries = vectors(12)
    async with pool.acquire() as conn:
        await written(conn, "ana", 0, 300)
        assert await held(resident, conn, queries[0], 10) == await exact(
            conn, "ana", queries[0], 10
        )
        rewritten = ["m00100", "m00201", "m00299"]
        fresh = vectors(3)
        await store.put_vectors(conn, GENERATION.name, "t", "ana", "message", rewritten, fresh)
        for item, vector in zip(rewritten, fresh, strict=True):
            assert (await held(resident, conn, vector, 1))[0] == item
        await written(conn, "ana", 300, 20)

    async def both(query: np.ndarray) -> tuple[list[str], list[str]]:
        async with pool.acquire() as conn:
            return await held(resident, conn, query, 10), await exact(conn, "ana", query, 10)

    for ours, truth in await asyncio.gather(*(both(q) for q in queries)):
        assert ours == truth
    assert resident.holds(GENERATION.name, "t", "ana", "message") == 320
