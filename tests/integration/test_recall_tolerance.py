"""Recall reads questions as people ask them, on the real PostgreSQL with the default local
model (multilingual-e5-small): a question in one language finds a message in another, a
misspelt word finds its word, and a time the question names ("last May") puts the messages of
that period first — not those of another May."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime, timedelta

import asyncpg
import pytest

from engram.projections.messages.embeddings import store
from engram.projections.messages.embeddings.e5 import E5Embedder
from engram.projections.messages.embeddings.generation import EmbeddingGeneration
from engram.projections.messages.store import LogRecord, index_records
from engram.projections.messages.vectors import embed_messages, write_vectors
from engram.projections.reads.recall import recall, semantic_query
from engram.schemas.api import RecalledMessage
from engram.schemas.episodes import TurnAppended
from tests.support.episodes import turn

pytestmark = pytest.mark.integration

EMBEDDER = E5Embedder(threads=1)
GENERATION = EmbeddingGeneration.of(EMBEDDER.model)
TOPIC = "recall.tolerance.episodes"
ASKED = datetime(2024, 6, 10, 12, 0, tzinfo=UTC)

SAID = [
    ("I planted tomatoes and basil on the balcony.", datetime(2024, 5, 12, 9, 0, tzinfo=UTC)),
    ("I planted tomatoes and peppers in the garden.", datetime(2023, 5, 14, 9, 0, tzinfo=UTC)),
    ("My brother is a carpenter in Coimbra.", datetime(2024, 2, 3, 18, 0, tzinfo=UTC)),
    ("We booked a restaurant for my mother's birthday.", datetime(2024, 3, 9, 20, 0, tzinfo=UTC)),
    ("The dentist said my teeth are fine.", datetime(2024, 4, 1, 8, 0, tzinfo=UTC)),
]


def at(said: TurnAppended, moment: datetime) -> TurnAppended:
    return said.model_copy(update={"occurred_at": moment})


async def remembered(
    conn: asyncpg.Connection, tenant: str, turns: Sequence[TurnAppended] | None = None
) -> None:
    """Ana's messages (``turns``, or those of :data:`SAID`) indexed and embedded as the indexer
    and the follower write them, the generation built and active."""
    if turns is None:
        turns = [
            at(turn(tenant, "ana", "p", text, seq=i, session=f"s{i}"), moment)
            for i, (text, moment) in enumerate(SAID)
        ]
    records = [LogRecord(0, i, t.model_dump_json().encode()) for i, t in enumerate(turns)]
    await index_records(conn, TOPIC, 0, records)
    await store.register(conn, GENERATION)
    vectors = await embed_messages(EMBEDDER, GENERATION, records)
    await write_vectors(conn, GENERATION.name, TOPIC, 0, records, vectors)
    await store.mark_built(conn, GENERATION.name)
    await store.activate(conn, GENERATION.name)


async def asked(conn: asyncpg.Connection, tenant: str, question: str) -> list[RecalledMessage]:
    found = await recall(
        conn,
        tenant=tenant,
        principal="ana",
        query=question,
        semantic=await semantic_query(conn, EMBEDDER, question),
        asked_at=ASKED,
    )
    return [h for h in found.hits if isinstance(h, RecalledMessage)]


def first(hits: Sequence[RecalledMessage]) -> str:
    assert hits, "something is recalled"
    return hits[0].content


async def test_a_question_in_portuguese_finds_the_english_message(pool: asyncpg.Pool) -> None:
    async with pool.acquire() as conn:
        await remembered(conn, "lang")
        hits = await asked(conn, "lang", "O que faz o meu irmão?")  # what does my brother do?
    assert first(hits) == "My brother is a carpenter in Coimbra."
    assert hits[0].semantic_rank == 1, "by meaning"
    assert hits[0].lexical_rank == 1, "and by its words: irmão is brother (the glossary)"


BUSY = [
    "Busy day: dropped the kids at school, answered emails, and the adoption agency called back.",
    "I started the long process of applying for a new job at the bank.",
    "The interview went well, they want to meet my family next week.",
    "We talked for hours about having children someday.",
    "Filled in forms all afternoon, so much paperwork for the new house.",
    "Between meetings I read a chapter on the history of the Roman republic.",
]


async def test_a_word_the_model_misreads_in_a_question_is_found_through_its_english_word(
    pool: asyncpg.Pool,
) -> None:
    """By meaning alone (the code before the glossary), "which process did I start?" asked in
    Spanish or Portuguese ranks the busy day with the adoption agency first; "proceso" and
    "processo" are "process", which only the job application holds."""
    async with pool.acquire() as conn:
        turns = [
            turn("busy", "ana", "p", text, seq=i, session=f"s{i}") for i, text in enumerate(BUSY)
        ]
        await remembered(conn, "busy", turns)
        spanish = await asked(conn, "busy", "¿Qué proceso empecé?")
        portuguese = await asked(conn, "busy", "Em que processo entrei?")
    for hits in (portuguese, spanish):
        assert first(hits) == BUSY[1]
        assert hits[0].lexical_rank == 1


async def test_a_misspelt_word_finds_its_word(pool: asyncpg.Pool) -> None:
    async with pool.acquire() as conn:
        await remembered(conn, "typo")
        by_words = await recall(
            conn, tenant="typo", principal="ana", query="resturant booking", asked_at=ASKED
        )
    hits = [h for h in by_words.hits if isinstance(h, RecalledMessage)]
    assert first(hits) == "We booked a restaurant for my mother's birthday."
    assert hits[0].lexical_rank == 1, "found by the corrected word, not only by meaning"


async def test_last_may_finds_that_may_and_not_another(pool: asyncpg.Pool) -> None:
    async with pool.acquire() as conn:
        await remembered(conn, "when")
        last_may = await asked(conn, "when", "What did I plant last May?")
        a_year_before = await asked(conn, "when", "What did I plant in May 2023?")
    assert first(last_may) == "I planted tomatoes and basil on the balcony."
    assert last_may[0].occurred_at.year == 2024
    assert first(a_year_before) == "I planted tomatoes and peppers in the garden."
    planted = [h.content for h in last_may if h.content.startswith("I planted")]
    assert planted[0] != "I planted tomatoes and peppers in the garden."


async def test_a_question_of_only_common_words_is_answered_by_meaning(pool: asyncpg.Pool) -> None:
    async with pool.acquire() as conn:
        await remembered(conn, "stop")
        hits = await asked(conn, "stop", "What was it about?")
    assert hits and all(h.semantic_rank for h in hits)
    assert timedelta(0) < ASKED - hits[0].occurred_at


async def test_a_question_that_is_only_a_date_is_answered_from_the_period(
    pool: asyncpg.Pool,
) -> None:
    async with pool.acquire() as conn:
        await remembered(conn, "dated")
        by_words = await recall(
            conn, tenant="dated", principal="ana", query="March 2024", asked_at=ASKED
        )
        by_meaning_too = await asked(conn, "dated", "In May?")
    hits = [h for h in by_words.hits if isinstance(h, RecalledMessage)]
    assert [h.content for h in hits] == ["We booked a restaurant for my mother's birthday."]
    assert hits[0].lexical_rank is None
    assert [h.content for h in by_meaning_too] == ["I planted tomatoes and basil on the balcony."]


async def test_relative_time_is_read_from_the_date_the_question_is_asked(
    pool: asyncpg.Pool,
) -> None:
    a_year_earlier = datetime(2023, 6, 10, 12, 0, tzinfo=UTC)
    async with pool.acquire() as conn:
        await remembered(conn, "asked")
        then = await recall(
            conn,
            tenant="asked",
            principal="ana",
            query="What did I plant last May?",
            asked_at=a_year_earlier,
        )
    hits = [h for h in then.hits if isinstance(h, RecalledMessage)]
    assert first(hits) == "I planted tomatoes and peppers in the garden."


WORDS_SAID = [
    "The new sofa cost a fortune.",
    "We painted the shed green on Sunday.",
    "I walked in the park after lunch.",
    "Last month I moved to a bigger flat.",
    "Meditation helps me sleep.",
]


async def said_only(conn: asyncpg.Connection, tenant: str) -> None:
    """Ana's :data:`WORDS_SAID`, indexed (no vectors: these questions are matched by words)."""
    turns = [
        turn(tenant, "ana", "p", text, seq=i, session=f"s{i}") for i, text in enumerate(WORDS_SAID)
    ]
    records = [LogRecord(0, i, t.model_dump_json().encode()) for i, t in enumerate(turns)]
    await index_records(conn, TOPIC, 0, records)


async def by_words(conn: asyncpg.Connection, tenant: str, question: str) -> list[str]:
    found = await recall(conn, tenant=tenant, principal="ana", query=question, asked_at=ASKED)
    return [h.content for h in found.hits if isinstance(h, RecalledMessage)]


async def test_a_real_word_the_principal_never_said_is_not_rewritten(pool: asyncpg.Pool) -> None:
    async with pool.acquire() as conn:
        await said_only(conn, "words")
        coat = await by_words(conn, "words", "How many coats did the shed get?")
        para = await by_words(conn, "words", "O que eu comprei para o jardim?")
        montou = await by_words(conn, "words", "Quando ele montou a tenda?")
    assert coat == ["We painted the shed green on Sunday."], "coat is not cost"
    assert "I walked in the park after lunch." not in para, "para is not park"
    assert "Last month I moved to a bigger flat." not in montou, "montou is not month"


async def test_a_word_that_is_no_word_is_corrected_by_adding_its_word(
    pool: asyncpg.Pool,
) -> None:
    async with pool.acquire() as conn:
        await said_only(conn, "meditaion")
        found = await recall(
            conn, tenant="meditaion", principal="ana", query="When did I start meditaion?"
        )
    hits = [h for h in found.hits if isinstance(h, RecalledMessage)]
    assert first(hits) == "Meditation helps me sleep."
    assert hits[0].lexical_rank == 1
