"""Search answers questions (issue 28, item 1): in mode ``any`` a question in plain words finds
the beliefs it is about, accents do not matter, a job is a role; mode ``all`` keeps web-search
semantics; either way only the caller's beliefs are searched — on beliefs formed by a real
worker from turns on a real log, read from real PostgreSQL."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import asyncpg
import pytest

from engram.generations.reading import reading
from engram.ingest.producer import EpisodeProducer
from engram.ingest.topics import ensure_topics
from engram.projections.reads.search import UnsearchableQuery, search_beliefs
from engram.schemas.api import SearchMode
from engram.schemas.episodes import TurnAppended
from engram.watermarks.waiting import wait_for_watermarks
from tests.support.episodes import turn
from tests.support.isolation import Isolated, running_worker

pytestmark = pytest.mark.integration

WAIT_S = 90


class Memory:
    def __init__(self, isolated: Isolated, pool: asyncpg.Pool) -> None:
        self.tenant, self.pool = isolated.tenant, pool
        self.kafka = isolated.kafka(partitions=1)

    async def say(self, *turns: TurnAppended) -> None:
        async with EpisodeProducer(self.kafka) as producer:
            appended = await producer.publish_many(turns)
        await wait_for_watermarks(self.pool, appended, timeout_s=WAIT_S)

    async def objects(
        self, query: str, *, principal: str = "ana", tenant: str | None = None, **options: object
    ) -> list[str]:
        tenant = tenant or self.tenant
        async with reading(self.pool, principal=(tenant, principal)) as conn:
            found = await search_beliefs(
                conn,
                tenant=tenant,
                principal=principal,
                query=query,
                **options,  # type: ignore[arg-type]
            )
        return [str(h.belief.object) for h in found.hits]


@pytest.fixture
async def memory(isolated: Isolated, pool: asyncpg.Pool, tmp_path: Path) -> AsyncIterator[Memory]:
    kafka = isolated.kafka(partitions=1)
    await ensure_topics(kafka)
    with running_worker(isolated, log_path=tmp_path / "worker.log", env=isolated.env(partitions=1)):
        memory = Memory(isolated, pool)
        t = memory.tenant
        await memory.say(
            turn(t, "ana", "p", "I am a nurse.", seq=0),
            turn(t, "ana", "p", "I live in Lisbon.", seq=1, session="s2"),
            turn(t, "ana", "p", "I love Café Lumière.", seq=2, session="s3"),
            turn(t, "ana", "p", "I use Vim.", seq=3, session="s4"),
            turn(t, "bo", "p", "I live in Porto.", seq=4, session="s5"),
            turn(f"{t}-other", "ana", "p", "I live in Madrid.", seq=5, session="s6"),
        )
        yield memory


async def test_questions_find_what_they_ask_about_and_ignore_accents(memory: Memory) -> None:
    assert await memory.objects("Where does ana live these days?") == ["Lisbon"]
    assert await memory.objects("which cafe do I love") == ["Café Lumière"]
    assert await memory.objects("what is my job") == ["nurse"]  # a job is a role
    # more distinct matching words rank first, whatever the score says
    async with reading(memory.pool, principal=(memory.tenant, "ana")) as conn:
        hits = (
            await search_beliefs(
                conn, tenant=memory.tenant, principal="ana", query="lives in Lisbon? Vim!"
            )
        ).hits
    assert [(h.belief.object, h.matched_terms) for h in hits] == [("Lisbon", 2), ("Vim", 1)]


async def test_mode_all_keeps_every_word_must_match_with_phrases_and_exclusions(
    memory: Memory,
) -> None:
    every = {"mode": SearchMode.ALL}
    assert await memory.objects("Where does ana live these days?", **every) == []
    assert await memory.objects("live Lisbon", **every) == ["Lisbon"]
    assert await memory.objects("live -Lisbon", **every) == []
    assert await memory.objects('"lives in Lisbon"', **every) == ["Lisbon"]
    assert await memory.objects("lisbon or vim", **every) in (["Lisbon", "Vim"], ["Vim", "Lisbon"])
    assert await memory.objects("cafe", **every) == ["Café Lumière"]  # accents: both modes


async def test_search_keeps_to_the_callers_tenant_and_principal(memory: Memory) -> None:
    assert await memory.objects("where do I live") == ["Lisbon"]
    assert await memory.objects("where do I live", principal="bo") == ["Porto"]
    assert await memory.objects("where do I live", tenant=f"{memory.tenant}-other") == ["Madrid"]
    assert await memory.objects("Porto Madrid") == []


async def test_a_question_of_only_question_words_and_the_name_is_unsearchable(
    memory: Memory,
) -> None:
    with pytest.raises(UnsearchableQuery, match="principal's own name"):
        await memory.objects("What would Ana think?")
