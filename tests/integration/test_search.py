"""Search ranks by the documented combination and keeps to the beliefs that apply where the
caller asks — on beliefs formed by a real worker from turns on a real log."""

from __future__ import annotations

import math
from collections.abc import AsyncIterator
from pathlib import Path

import asyncpg
import pytest

from engram.generations.reading import reading
from engram.ingest.producer import EpisodeProducer
from engram.ingest.topics import ensure_topics
from engram.projections.reads.queries import list_beliefs
from engram.projections.reads.search import RECENCY_HALF_LIFE_DAYS, search_beliefs
from engram.schemas.api import SearchResults
from engram.schemas.corrections import CorrectionKind
from engram.schemas.episodes import TurnAppended
from engram.service.corrections import Corrections
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

    async def search(self, query: str, **options: object) -> SearchResults:
        async with reading(self.pool, principal=(self.tenant, "ana")) as conn:
            return await search_beliefs(
                conn,
                tenant=self.tenant,
                principal="ana",
                query=query,
                **options,  # type: ignore[arg-type]
            )


@pytest.fixture
async def memory(isolated: Isolated, pool: asyncpg.Pool, tmp_path: Path) -> AsyncIterator[Memory]:
    kafka = isolated.kafka(partitions=1)
    await ensure_topics(kafka)
    with running_worker(isolated, log_path=tmp_path / "worker.log", env=isolated.env(partitions=1)):
        yield Memory(isolated, pool)


async def test_corroboration_ranks_first_and_every_score_is_the_documented_product(
    memory: Memory,
) -> None:
    t = memory.tenant
    await memory.say(
        turn(t, "ana", "p", "I use Vim.", seq=0),
        turn(t, "ana", "p", "I use Vim.", seq=1, session="s2"),
        turn(t, "ana", "p", "I use Emacs.", seq=2, session="s3"),
    )
    found = await memory.search("use")
    assert [h.belief.object for h in found.hits] == ["Vim", "Emacs"]
    assert [h.belief.corroboration for h in found.hits] == [2, 1]
    assert found.hits[0].relevance == found.hits[1].relevance, "only the belief differs"
    newest = max(h.belief.known_from for h in found.hits)
    for hit in found.hits:
        b = hit.belief
        age_days = (newest - b.known_from).total_seconds() / 86400
        expected = (
            hit.relevance
            * (0.4 + 0.6 * b.confidence)
            * (1 + 0.25 * math.log(b.corroboration))
            * (0.5 + 0.5 * 0.5 ** (age_days / RECENCY_HALF_LIFE_DAYS))
        )
        assert hit.score == pytest.approx(expected, rel=1e-3)


async def test_with_a_project_search_keeps_to_what_applies_there(memory: Memory) -> None:
    t = memory.tenant
    await memory.say(turn(t, "ana", "home", "I prefer tea.", seq=0))
    [belief] = await list_beliefs(memory.pool, tenant=t, principal="ana")
    position = await Corrections(memory.pool, memory.kafka).correct(
        tenant=t,
        principal="ana",
        belief_id=belief.belief_id,
        kind=CorrectionKind.NOT_HERE,
        project="work",
    )
    await wait_for_watermarks(memory.pool, [position], timeout_s=WAIT_S)
    assert [h.belief.object for h in (await memory.search("tea", project="home")).hits] == ["tea"]
    assert (await memory.search("tea", project="work")).hits == []
    assert [h.belief.object for h in (await memory.search("tea")).hits] == ["tea"]
