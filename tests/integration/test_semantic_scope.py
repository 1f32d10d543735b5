"""The semantic list scopes the nearest vectors a hundred at a time, on the real PostgreSQL:
it holds exactly what scoping all of them at once held — the first ``CANDIDATES`` of the
nearest in the question's scope, best first — when the nearest are mostly another role's
(vectors kept for every role) and when they are all in scope."""

from __future__ import annotations

import uuid

import asyncpg
import numpy as np
import pytest

from engram.projections.messages.embeddings import store
from engram.projections.messages.embeddings.embedder import unit_rows
from engram.projections.messages.embeddings.generation import EmbeddingGeneration
from engram.projections.reads.recall import (
    CANDIDATES,
    SEMANTIC_CANDIDATES,
    SemanticQuery,
    semantic_messages,
)

pytestmark = pytest.mark.integration

GENERATION = EmbeddingGeneration("scope-test", 16, "plain-v1")
MESSAGES = 280

_MESSAGE = """
INSERT INTO message (tenant, principal, project, session, episode_id, message_ordinal, role,
                     author, content, occurred_at, source_partition, source_offset)
SELECT 't', 'ana', 'p', 's', e, 0, r, NULL, 'words', timestamptz '2026-01-01', 0, o
FROM unnest($1::uuid[], $2::text[], $3::bigint[]) AS m(e, r, o)
"""


async def test_scoped_in_steps_holds_what_scoping_all_at_once_held(pool: asyncpg.Pool) -> None:
    rng = np.random.default_rng(44)
    episodes = [uuid.UUID(int=i + 1) for i in range(MESSAGES)]
    matrix = unit_rows(rng.standard_normal((MESSAGES, 16)), dimensions=16)
    query = unit_rows(rng.standard_normal((1, 16)), dimensions=16)[0]
    order = np.argsort(-(matrix @ query), kind="stable")
    # The nearest 150 are mostly the assistant's: scoping the first hundred finds too few.
    roles = ["user"] * MESSAGES
    for place, at in enumerate(order[:150]):
        roles[at] = "user" if place % 5 == 0 else "assistant"
    async with pool.acquire() as conn:
        await conn.execute(_MESSAGE, episodes, roles, list(range(MESSAGES)))
        await store.register(conn, GENERATION)
        await store.mark_built(conn, GENERATION.name)
        await store.activate(conn, GENERATION.name)
        items = [f"{e}:0" for e in episodes]
        await store.put_vectors(conn, GENERATION.name, "t", "ana", "message", items, matrix)

        nearest = await store.search(conn, "t", "ana", "message", query, limit=SEMANTIC_CANDIDATES)
        by_item = dict(zip(items, zip(episodes, roles, strict=True), strict=True))
        for role_names in (["user"], ["assistant"], ["assistant", "user"]):
            expected = [
                ((by_item[h.item_id][0], 0), h.score)
                for h in nearest.hits
                if by_item[h.item_id][1] in role_names
            ][:CANDIDATES]
            found, rows = await semantic_messages(
                conn,
                SemanticQuery(GENERATION.name, query),
                tenant="t",
                principal="ana",
                role_names=role_names,
                project=None,
            )
            assert [m for m, _ in found] == [m for m, _ in expected]
            assert [s for _, s in found] == pytest.approx([s for _, s in expected], abs=1e-6)
            held = {(r["episode_id"], r["message_ordinal"]) for r in rows}
            assert {m for m, _ in found} <= held
            assert all(r["role"] in role_names for r in rows)
