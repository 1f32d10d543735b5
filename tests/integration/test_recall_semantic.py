"""Recall's semantic list on the real PostgreSQL: a question that shares no word with the
message that answers it finds it by meaning once the generation is active; a generation still
being built is never read (recall stays lexical, and naming it is refused); a hidden message is
never answered by meaning."""

from __future__ import annotations

from collections.abc import Sequence

import asyncpg
import pytest

from engram.projections.messages.embeddings import store
from engram.projections.messages.embeddings.generation import EmbeddingGeneration
from engram.projections.messages.embeddings.local import WordLlamaEmbedder
from engram.projections.messages.store import LogRecord, MessageKey, hide_messages, index_records
from engram.projections.messages.vectors import embed_messages, write_vectors
from engram.projections.reads.recall import embed_question, recall, semantic_query
from engram.schemas.api import RecalledMessage
from tests.support.episodes import turn

pytestmark = pytest.mark.integration

EMBEDDER = WordLlamaEmbedder(64)
GENERATION = EmbeddingGeneration.of(EMBEDDER.model)
TOPIC = "recall.semantic.episodes"
QUESTION = "do I have a pet?"


async def said(conn: asyncpg.Connection, tenant: str) -> list[LogRecord]:
    """Three of ana's turns indexed and embedded as the indexer and the follower write them."""
    turns = [
        turn(tenant, "ana", "p", "I adopted a small grey kitten last spring.", seq=0),
        turn(tenant, "ana", "p", "The bakery on my street sells rye bread.", seq=1),
        turn(tenant, "ana", "p", "I have a meeting about the budget tomorrow.", seq=2),
    ]
    records = [LogRecord(0, i, t.model_dump_json().encode()) for i, t in enumerate(turns)]
    await index_records(conn, TOPIC, 0, records)
    await store.register(conn, GENERATION)
    await write_vectors(
        conn,
        GENERATION.name,
        TOPIC,
        0,
        records,
        await embed_messages(EMBEDDER, GENERATION, records),
    )
    return records


def contents(hits: Sequence[object]) -> list[str]:
    return [h.content for h in hits if isinstance(h, RecalledMessage)]


async def test_a_question_without_a_shared_word_is_answered_by_meaning_once_active(
    pool: asyncpg.Pool,
) -> None:
    async with pool.acquire() as conn:
        await said(conn, "t")
        # Building: recall reads no vectors (lexical only); naming the generation is refused.
        assert await semantic_query(conn, EMBEDDER, QUESTION) is None
        lexical = await recall(conn, tenant="t", principal="ana", query=QUESTION)
        assert "I adopted a small grey kitten last spring." not in contents(lexical.hits)
        with pytest.raises(store.EmbeddingGenerationNotBuilt, match="still being built"):
            await recall(
                conn,
                tenant="t",
                principal="ana",
                query=QUESTION,
                semantic=await embed_question(EMBEDDER, QUESTION),
            )

        await store.mark_built(conn, GENERATION.name)
        await store.activate(conn, GENERATION.name)
        semantic = await semantic_query(conn, EMBEDDER, QUESTION)
        assert semantic is not None and semantic.generation == GENERATION.name
        found = await recall(conn, tenant="t", principal="ana", query=QUESTION, semantic=semantic)
        [first, *_] = [h for h in found.hits if isinstance(h, RecalledMessage)]
        assert first.content == "I adopted a small grey kitten last spring."
        assert (first.semantic_rank, first.lexical_rank) == (1, None)
        # Another principal's vectors are never read.
        other = await recall(conn, tenant="t", principal="bo", query=QUESTION, semantic=semantic)
        assert other.hits == []


async def test_a_hidden_message_is_not_answered_by_meaning(pool: asyncpg.Pool) -> None:
    async with pool.acquire() as conn:
        records = await said(conn, "t")
        await store.mark_built(conn, GENERATION.name)
        await store.activate(conn, GENERATION.name)
        kitten = turn("t", "ana", "p", "I adopted a small grey kitten last spring.", seq=0)
        assert records[0].value == kitten.model_dump_json().encode()
        async with conn.transaction():
            await hide_messages(conn, [MessageKey("t", "ana", kitten.event_id, 0)])
        assert (
            await conn.fetchval(
                "SELECT count(*) FROM embedding_vector WHERE item_id = $1",
                f"{kitten.event_id}:0",
            )
            == 0
        )
        semantic = await semantic_query(conn, EMBEDDER, QUESTION)
        found = await recall(conn, tenant="t", principal="ana", query=QUESTION, semantic=semantic)
        assert "I adopted a small grey kitten last spring." not in contents(found.hits)
