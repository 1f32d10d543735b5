"""Recall's second stage on the real PostgreSQL: the first candidates read again with the
question — a "when" question finds the message that says when before one that only shares its
words, a "how many" question the one that tells a number before one that asks, and the first
stage's order is what ``reread=False`` serves."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import asyncpg
import pytest

from engram.projections.messages.store import LogRecord, index_records
from engram.projections.reads.recall import recall
from engram.schemas.api import RecalledMessage
from engram.schemas.episodes import TurnAppended
from tests.support.episodes import turn

pytestmark = pytest.mark.integration

TOPIC = "recall.rerank.episodes"
ASKED = datetime(2024, 6, 10, 12, 0, tzinfo=UTC)

SAID = [
    "The kayak trip on the river was fun.",
    "We did the kayak trip on the river last Saturday, with my cousins from the village.",
    "Is the pottery class on the hill?",
    "My pottery class has twelve students, and the teacher is from the hill town nearby.",
    "I bought new shoes for the wedding.",
]


def at(said: TurnAppended, moment: datetime) -> TurnAppended:
    return said.model_copy(update={"occurred_at": moment})


async def remembered(conn: asyncpg.Connection, tenant: str) -> None:
    """Ana's messages, each in a session of its own, indexed as the indexer writes them."""
    start = datetime(2024, 5, 1, 9, 0, tzinfo=UTC)
    turns = [
        at(turn(tenant, "ana", "p", text, seq=i, session=f"s{i}"), start + timedelta(days=i))
        for i, text in enumerate(SAID)
    ]
    records = [LogRecord(0, i, t.model_dump_json().encode()) for i, t in enumerate(turns)]
    await index_records(conn, TOPIC, 0, records)


async def asked(
    conn: asyncpg.Connection, tenant: str, question: str, *, reread: bool = True
) -> list[RecalledMessage]:
    found = await recall(
        conn, tenant=tenant, principal="ana", query=question, asked_at=ASKED, reread=reread
    )
    return [h for h in found.hits if isinstance(h, RecalledMessage)]


async def test_a_when_question_finds_the_message_that_says_when(pool: asyncpg.Pool) -> None:
    async with pool.acquire() as conn:
        await remembered(conn, "when")
        first_stage = await asked(
            conn, "when", "When was the kayak trip on the river?", reread=False
        )
        reread = await asked(conn, "when", "When was the kayak trip on the river?")
    assert first_stage[0].content == SAID[0], "by words alone, the shorter message leads"
    assert reread[0].content == SAID[1]
    assert {h.content for h in reread} == {h.content for h in first_stage}


async def test_a_how_many_question_finds_a_number_before_a_question(pool: asyncpg.Pool) -> None:
    async with pool.acquire() as conn:
        await remembered(conn, "count")
        first_stage = await asked(conn, "count", "How many in the pottery class?", reread=False)
        reread = await asked(conn, "count", "How many in the pottery class?")
    assert first_stage[0].content == SAID[2]
    assert reread[0].content == SAID[3]


async def test_the_second_stages_order_is_served_with_falling_scores(pool: asyncpg.Pool) -> None:
    async with pool.acquire() as conn:
        await remembered(conn, "order")
        hits = await asked(conn, "order", "When was the kayak trip on the river?")
        again = await asked(conn, "order", "When was the kayak trip on the river?")
    scores = [h.fused for h in hits]
    assert scores == sorted(scores, reverse=True) and len(set(scores)) == len(scores)
    assert [h.event_id for h in hits] == [h.event_id for h in again]
