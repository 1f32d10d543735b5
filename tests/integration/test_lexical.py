"""Recall's lexical list on real PostgreSQL: ranked from the postings and counts the indexer
keeps (migration 0027) exactly as Okapi BM25 over every message in scope ranks them, scoped by
tenant, principal, role and project; the counts equal a recount after writes, a record read
twice, deletions and forgetting; and a hidden or forgotten message is never ranked."""

from __future__ import annotations

import math
import uuid
from collections import Counter

import asyncpg
import pytest

from engram.projections.messages.lexical import (
    BM25_B,
    BM25_K1,
    Ranked,
    best_messages,
    question_statistics,
)
from engram.projections.messages.store import (
    STATS_TABLES,
    LogRecord,
    MessageKey,
    hide_messages,
    index_records,
    recount_stats,
)
from engram.projections.reads.search import question_words
from engram.schemas.corrections import PrincipalForgotten
from engram.schemas.episodes import TurnAppended
from tests.support.episodes import EPOCH, turn

pytestmark = pytest.mark.integration

TOPIC = "test.episodes"
T = "acme"

SAID = [
    ("ana", "p", ("I brought a kimono back from Japan.", "Japan is lovely in spring.")),
    ("ana", "p", ("Japan, Japan, Japan: I keep thinking about Japan and its trains.",)),
    ("ana", "p", ("My café serves ramen now, and the ramen sells out by noon.",)),
    ("ana", "q", ("The trains in Japan run on time; I took the night train to Kyoto.",)),
    ("ana", "q", ("I adopted a grey kitten.", "A kitten! What is its name?")),
    ("ana", "p", ("Spring in Lisbon is mild; I walked along the river every morning there.",)),
    ("ana", "p", ("Tea with my sister on Sunday.",)),
    ("ana", "q", ("My sister visits Japan next spring and wants to see Kyoto temples.",)),
    ("bo", "p", ("Japan Japan kimono ramen trains Kyoto spring.",)),
]
"""Ana's messages (both roles, two projects) and Bo's, holding the same words: a scope that
leaked would change the counts and the order."""

QUESTIONS = [
    "What did I bring back from Japan?",
    "Which trains did I take in Japan to Kyoto?",
    "Does my cafe serve ramen?",
    "When is spring in Lisbon, and what about my sister?",
    "kitten",
]


def records(turns: list[TurnAppended | PrincipalForgotten], start: int = 0) -> list[LogRecord]:
    return [LogRecord(0, start + i, t.model_dump_json().encode()) for i, t in enumerate(turns)]


def said() -> list[TurnAppended | PrincipalForgotten]:
    roles = ("user", "assistant")
    return [
        turn(T, who, project, *contents, seq=seq, roles=roles)
        for seq, (who, project, contents) in enumerate(SAID)
    ]


async def exhaustive(
    conn: asyncpg.Connection, words: list[str], roles: list[str], project: str | None
) -> list[tuple[tuple[object, int], float]]:
    """Okapi BM25 over every message of Ana's in scope, computed here from the messages'
    vectors with their contexts' (migration 0035) — the reference the postings must equal."""
    vectors = await conn.fetch(
        "SELECT m.episode_id, m.message_ordinal, m.source_offset, "
        "array_agg(v.lexeme) AS lexemes, array_agg(cardinality(v.positions)) AS counts "
        "FROM message m, unnest(m.search_vector || coalesce(m.context_vector, ''::tsvector)) v "
        "WHERE m.tenant = $1 AND m.principal = 'ana' "
        "AND m.role = ANY($2::text[]) AND ($3::text IS NULL OR m.project = $3) "
        "GROUP BY m.episode_id, m.message_ordinal, m.source_offset",
        T,
        roles,
        project,
    )
    terms = await conn.fetchval(
        "SELECT array_agg(DISTINCT v.lexeme) FROM "
        "unnest(to_tsvector('engram_english', array_to_string($1::text[], ' '))) v",
        words,
    )
    docs = [(r, dict(zip(r["lexemes"], r["counts"], strict=True))) for r in vectors]
    n = len(docs)
    average = sum(sum(tf.values()) for _, tf in docs) / n
    df = Counter(term for _, tf in docs for term in tf)
    scored = []
    for row, tf in docs:
        length = sum(tf.values())
        score = sum(
            math.log(1 + (n - df[t] + 0.5) / (df[t] + 0.5))
            * tf[t]
            * (BM25_K1 + 1)
            / (tf[t] + BM25_K1 * (1 - BM25_B + BM25_B * length / average))
            for t in terms or ()
            if t in tf
        )
        if score > 0:
            key = (row["episode_id"], row["message_ordinal"])
            scored.append((key, score, row["source_offset"]))
    scored.sort(key=lambda s: (-s[1], -s[2], s[0]))
    return [(key, score) for key, score, _ in scored]


async def ranked(
    conn: asyncpg.Connection,
    question: str,
    roles: list[str],
    project: str | None,
    *,
    budget: int = 40_000,
    principal: str = "ana",
) -> Ranked:
    stats = await question_statistics(
        conn,
        tenant=T,
        principal=principal,
        words=question_words(question, principal),
        roles=roles,
        project=project,
    )
    return await best_messages(
        conn,
        stats,
        tenant=T,
        principal=principal,
        roles=roles,
        project=project,
        limit=100,
        budget=budget,
    )


async def counts(conn: asyncpg.Connection) -> dict[str, list[tuple[object, ...]]]:
    return {
        table: [tuple(r) for r in await conn.fetch(f"SELECT * FROM {table} ORDER BY 1, 2, 3, 4, 5")]
        for table in STATS_TABLES
    }


class _RollBack(Exception):
    """Leaves a block's transaction undone."""


async def assert_counts_are_a_recount(conn: asyncpg.Connection) -> None:
    """What the writes maintained equals counting ``message`` again (in a transaction rolled
    back, so the maintained rows stay for the next step)."""
    try:
        async with conn.transaction():
            maintained = await counts(conn)
            await recount_stats(conn)
            recounted = await counts(conn)
            raise _RollBack
    except _RollBack:
        pass
    assert recounted == maintained
    assert maintained["message_term"], "something is counted"


async def lexemes_of(conn: asyncpg.Connection, principal: str, table: str) -> set[str]:
    return {
        r["lexeme"]
        for r in await conn.fetch(
            f"SELECT DISTINCT lexeme FROM {table} WHERE tenant = $1 AND principal = $2",
            T,
            principal,
        )
    }


@pytest.mark.parametrize("question", QUESTIONS)
@pytest.mark.parametrize(
    ("roles", "project"), [(["user"], None), (["assistant", "user"], None), (["user"], "q")]
)
async def test_the_postings_rank_as_bm25_over_every_message_in_scope(
    pool: asyncpg.Pool, question: str, roles: list[str], project: str | None
) -> None:
    async with pool.acquire() as conn:
        await index_records(conn, TOPIC, 0, records(said()))
        expected = await exhaustive(conn, question_words(question, "ana"), roles, project)
        got = await ranked(conn, question, roles, project)
    assert got.exact
    assert [(r["episode_id"], r["message_ordinal"]) for r in got.rows] == [k for k, _ in expected]
    assert [r["score"] for r in got.rows] == pytest.approx([s for _, s in expected], rel=1e-12)
    assert {r["role"] for r in got.rows} <= set(roles)
    assert project is None or {r["project"] for r in got.rows} <= {project}


async def test_a_budget_reads_the_rarest_terms_and_says_the_list_is_not_exhaustive(
    pool: asyncpg.Pool,
) -> None:
    async with pool.acquire() as conn:
        await index_records(conn, TOPIC, 0, records(said()))
        whole = await ranked(conn, "kimono in Japan", ["user"], None)
        rarest = await ranked(conn, "kimono in Japan", ["user"], None, budget=1)
    assert whole.exact and not rarest.exact
    assert [r["content"] for r in rarest.rows] == ["I brought a kimono back from Japan."]
    assert len(whole.rows) > 1


async def test_the_counts_stay_a_recount_through_a_reread_a_deletion_and_a_forgetting(
    pool: asyncpg.Pool,
) -> None:
    turns = said()
    async with pool.acquire() as conn:
        await index_records(conn, TOPIC, 0, records(turns))
        await assert_counts_are_a_recount(conn)
        await index_records(conn, "another.topic", 0, records(turns))  # every row read twice
        await assert_counts_are_a_recount(conn)
        kimono = MessageKey(T, "ana", turns[0].event_id, 0)
        await hide_messages(conn, [kimono], quotes=["Tea with my sister"])
        await assert_counts_are_a_recount(conn)
        for table in ("message_term", "message_term_stats"):
            assert {"kimono", "tea"}.isdisjoint(await lexemes_of(conn, "ana", table)), table
            assert "kimono" in await lexemes_of(conn, "bo", table)
        assert not (await ranked(conn, "kimono tea", ["user"], None)).rows
        forgotten = PrincipalForgotten(
            event_id=uuid.uuid4(),
            tenant=T,
            principal="ana",
            project="p",
            session="s1",
            occurred_at=EPOCH,
        )
        await index_records(conn, TOPIC, 0, records([*turns, forgotten]))
        await assert_counts_are_a_recount(conn)
        for table in STATS_TABLES:
            assert not await conn.fetchval(
                f"SELECT count(*) FROM {table} WHERE tenant = $1 AND principal = 'ana'", T
            )
        assert not (await ranked(conn, "Japan", ["user", "assistant"], None)).rows
        assert (await ranked(conn, "Japan", ["user"], None, principal="bo")).rows


CONVERSATION = [
    ("assistant", "How was the pottery workshop in Aveiro?"),
    ("user", "Loved it, we stayed until the evening."),
    ("assistant", "Did you bring anything home?"),
    ("user", "A blue bowl, still drying."),
]
"""A short reply holds none of its subject's words: they are in the turn it answers."""


def conversation(session: str = "s9") -> list[TurnAppended | PrincipalForgotten]:
    return [
        turn(T, "ana", "p", content, seq=100 + i, session=session, roles=(role,))
        for i, (role, content) in enumerate(CONVERSATION)
    ]


async def test_a_reply_is_found_by_the_words_of_the_turn_it_answers_and_cites_itself(
    pool: asyncpg.Pool,
) -> None:
    turns = conversation()
    async with pool.acquire() as conn:
        await index_records(conn, TOPIC, 0, records(turns))
        found = await ranked(conn, "What happened at the pottery workshop?", ["user"], None)
        await assert_counts_are_a_recount(conn)
    assert [r["content"] for r in found.rows][:1] == ["Loved it, we stayed until the evening."]
    assert found.rows[0]["episode_id"] == turns[1].event_id
    assert found.rows[0]["role"] == "user"


async def test_the_context_is_the_same_whether_a_session_is_indexed_at_once_or_in_pieces(
    pool: asyncpg.Pool,
) -> None:
    turns = conversation()
    async with pool.acquire() as conn:
        await index_records(conn, TOPIC, 0, records(turns))
        whole = await counts(conn)
        await conn.execute(f"TRUNCATE message, projector_offset, {', '.join(STATS_TABLES)}")
        for i, record in enumerate(records(turns)):
            await index_records(conn, TOPIC, 0, [record])
            assert (
                i == 0
                or await conn.fetchval(
                    "SELECT context_episode_id FROM message WHERE episode_id = $1",
                    turns[i].event_id,
                )
                == turns[i - 1].event_id
            )
        assert await counts(conn) == whole


async def test_hiding_the_turn_a_reply_answers_takes_its_words_out_of_the_replys_postings(
    pool: asyncpg.Pool,
) -> None:
    turns = conversation()
    async with pool.acquire() as conn:
        await index_records(conn, TOPIC, 0, records(turns))
        before = await lexemes_of(conn, "ana", "message_term")
        assert {"potteri", "aveiro", "workshop"} <= before
        await hide_messages(conn, [MessageKey(T, "ana", turns[0].event_id, 0)])
        await assert_counts_are_a_recount(conn)
        for table in ("message_term", "message_term_stats"):
            assert {"potteri", "aveiro", "workshop"}.isdisjoint(
                await lexemes_of(conn, "ana", table)
            ), table
        assert not (await ranked(conn, "pottery workshop Aveiro", ["user"], None)).rows
        # The reply after the hidden turn has no context; the later ones keep theirs.
        contexts = await conn.fetch(
            "SELECT episode_id, context_episode_id FROM message WHERE session = 's9' "
            "ORDER BY source_offset"
        )
    assert [(r["episode_id"], r["context_episode_id"]) for r in contexts] == [
        (turns[1].event_id, None),
        (turns[2].event_id, turns[1].event_id),
        (turns[3].event_id, turns[2].event_id),
    ]
