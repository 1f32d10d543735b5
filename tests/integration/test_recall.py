"""Recall on real Kafka and PostgreSQL (issue 28, item 5): turns on a real log, formed by a real
worker that also runs the message indexer; recall answers with beliefs first (with their
quotes), then the messages — the principal's own words unless other roles are asked for — each
saying what it is and where it is in the log; pages walk every hit once; a deleted belief's
words and a forgotten principal's are not recalled."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from pathlib import Path

import asyncpg
import pytest

from engram.generations.reading import reading
from engram.ingest.jsonl import load_episodes
from engram.ingest.producer import EpisodeProducer
from engram.ingest.topics import ensure_topics
from engram.projections.messages.embeddings import store as embedding_store
from engram.projections.messages.embeddings.e5 import E5Embedder
from engram.projections.reads.recall import (
    IndexBehind,
    InvalidCursor,
    UnsearchableQuery,
    recall,
    semantic_query,
    wait_indexed,
)
from engram.projections.reads.search import After
from engram.schemas.api import (
    LogPosition,
    RecalledBelief,
    RecalledMessage,
    RecallResults,
    SearchMode,
)
from engram.schemas.common import Role
from engram.schemas.episodes import TurnAppended
from engram.service.corrections import Corrections
from engram.watermarks.waiting import wait_for_watermarks
from tests.support.conditions import wait_until
from tests.support.episodes import turn
from tests.support.indexing import (
    DEFAULT_GENERATION,
    embedded_to_the_end,
    indexed_to_the_end,
    vectors_of,
)
from tests.support.isolation import Isolated, running_worker

pytestmark = pytest.mark.integration

WAIT_S = 90
EMBEDDER = E5Embedder()
"""The worker's default model: recall here is semantic, as the API's is by default."""


class Memory:
    def __init__(self, isolated: Isolated, pool: asyncpg.Pool) -> None:
        self.tenant, self.pool = isolated.tenant, pool
        self.kafka = isolated.kafka(partitions=1)
        self.corrections = Corrections(pool, self.kafka)
        self.offsets: dict[object, int] = {}

    async def say(self, *turns: TurnAppended) -> None:
        async with EpisodeProducer(self.kafka) as producer:
            appended = await producer.publish_many(turns)
        for t, a in zip(turns, appended, strict=True):
            self.offsets[t.event_id] = a.offset
        await self.formed(appended)

    async def formed(self, positions: list[LogPosition]) -> None:
        await wait_for_watermarks(self.pool, positions, timeout_s=WAIT_S)
        await indexed_to_the_end(self.kafka, self.pool, timeout_s=WAIT_S)
        await embedded_to_the_end(self.kafka, self.pool, timeout_s=WAIT_S)

        async def active() -> bool:
            row = await embedding_store.active(self.pool)
            return row is not None and row.name == DEFAULT_GENERATION

        # The follower activates its generation once it has read the log's end, just after it
        # stores that offset: recall is semantic from then on.
        await wait_until(active, timeout_s=WAIT_S, what="the default generation is active")

    async def recall(
        self,
        query: str,
        *,
        principal: str = "ana",
        tenant: str | None = None,
        semantic: bool = True,
        **options: object,
    ) -> RecallResults:
        tenant = tenant or self.tenant
        async with reading(self.pool, principal=(tenant, principal)) as conn:
            return await recall(
                conn,
                tenant=tenant,
                principal=principal,
                query=query,
                # as the API asks
                semantic=await semantic_query(conn, EMBEDDER if semantic else None, query),
                **options,  # type: ignore[arg-type]
            )


def words(found: RecallResults) -> list[str]:
    """Each hit as text: a belief's object, a message's content."""
    return [h.belief.object if isinstance(h, RecalledBelief) else h.content for h in found.hits]


@pytest.fixture
async def memory(isolated: Isolated, pool: asyncpg.Pool, tmp_path: Path) -> AsyncIterator[Memory]:
    kafka = isolated.kafka(partitions=1)
    await ensure_topics(kafka)
    with running_worker(isolated, log_path=tmp_path / "worker.log", env=isolated.env(partitions=1)):
        memory = Memory(isolated, pool)
        t = memory.tenant
        await memory.say(
            turn(t, "ana", "p", "I live in Lisbon.", "Lisbon is lovely in spring.", seq=0,
                 roles=("user", "assistant")),
            turn(t, "ana", "p", "We brought a kimono back from our trip to Japan.", seq=1,
                 session="s2"),
            turn(t, "ana", "p", "The kimono was a gift for my sister.", seq=2, session="s3"),
            turn(t, "bo", "p", "I brought sake back from Japan.", seq=3, session="s4"),
            turn(f"{t}-other", "ana", "p", "A kimono from Kyoto.", seq=4, session="s5"),
        )  # fmt: skip
        yield memory


async def test_beliefs_first_then_the_principals_own_words_each_saying_where_it_is(
    memory: Memory,
) -> None:
    # a belief sharing one common word with a longer question is not an answer...
    unrelated = await memory.recall("Where do I live, and what did I bring back from Japan?")
    assert [h.kind for h in unrelated.hits][:1] == ["message"]
    # ...one matching two of its words is, and comes first
    found = await memory.recall("Do I live in Lisbon, and what did I bring back from Japan?")
    kinds = [h.kind for h in found.hits]
    assert kinds == sorted(kinds), "every belief before every message"
    assert isinstance(found.hits[0], RecalledBelief) and found.hits[0].belief.object == "Lisbon"
    assert found.hits[0].belief.evidence[0].quote == "I live in Lisbon"
    messages = [h for h in found.hits if isinstance(h, RecalledMessage)]
    # the belief's source, first by its words (so the belief is shown); then the next match
    assert [m.content for m in messages][:2] == [
        "I live in Lisbon.",
        "We brought a kimono back from our trip to Japan.",
    ]
    assert (messages[0].quoted_rank, messages[1].quoted_rank) == (1, None)
    assert all(m.role is Role.USER and m.own_words for m in messages)
    assert "sake" not in " ".join(words(found)) and "Kyoto" not in " ".join(words(found))
    kimono = messages[1]
    t = memory.tenant
    trip = turn(t, "ana", "p", "x", seq=1, session="s2")
    assert (kimono.event_id, kimono.message_ordinal, kimono.session) == (trip.event_id, 0, "s2")
    assert (kimono.partition, kimono.offset) == (0, memory.offsets[trip.event_id])
    assert kimono.occurred_at == trip.occurred_at and kimono.project == "p"
    [mark] = found.reflects
    assert mark.project == "p" and mark.indexed_offset == mark.formed_offset is not None


async def test_other_roles_only_when_asked_and_labelled(memory: Memory) -> None:
    assert "Lisbon is lovely in spring." not in words(await memory.recall("lovely spring"))
    found = await memory.recall("lovely spring", roles=[Role.USER, Role.ASSISTANT])
    # first the words that match; meaning adds the rest of the principal's messages below
    said, *rest = [h for h in found.hits if isinstance(h, RecalledMessage)]
    assert said.lexical_rank == 1 and all(m.lexical_rank is None for m in rest)
    assert (said.content, said.role, said.own_words) == (
        "Lisbon is lovely in spring.",
        Role.ASSISTANT,
        False,
    )


async def test_pages_walk_every_hit_once_and_refuse_what_recall_did_not_issue(
    memory: Memory,
) -> None:
    question = "kimono Japan Lisbon sister trip"
    whole = await memory.recall(question, limit=100)
    assert len(whole.hits) >= 4 and whole.next_cursor is None
    walked: list[str] = []
    cursor = None
    while True:
        page = await memory.recall(question, limit=1, cursor=cursor)
        walked += words(page)
        if page.next_cursor is None:
            break
        cursor = page.next_cursor
    assert walked == words(whole)
    searchs = After(SearchMode.ANY, 1.5, uuid.UUID(int=1)).encode()
    with pytest.raises(InvalidCursor, match="another list"):
        await memory.recall(question, cursor=searchs)  # search's, not recall's
    with pytest.raises(InvalidCursor):
        await memory.recall(question, cursor="not-a-cursor")
    with pytest.raises(UnsearchableQuery, match="control character"):
        await memory.recall("kimono\x1b[2J")
    with pytest.raises(UnsearchableQuery, match="no words"):
        await memory.recall("What would Ana think?", semantic=False)
    by_meaning = await memory.recall("What would Ana think?")  # only stop words: by meaning
    assert by_meaning.hits
    assert all(isinstance(h, RecalledMessage) and h.semantic_rank for h in by_meaning.hits)


async def test_a_deleted_belief_and_a_forgotten_principal_are_not_recalled(memory: Memory) -> None:
    t = memory.tenant
    found = await memory.recall("where do I live")
    [lisbon] = [h.belief for h in found.hits if isinstance(h, RecalledBelief)]
    [quoted] = lisbon.evidence
    message = f"{quoted.episode_id}:{quoted.message_ordinal}"
    has_vector = "SELECT count(*) FROM embedding_vector WHERE item_id = $1 AND kind = 'message'"
    assert await memory.pool.fetchval(has_vector, message) == 1
    position = await memory.corrections.delete(
        tenant=t, principal="ana", belief_id=lisbon.belief_id
    )
    await memory.formed([position])
    assert await memory.pool.fetchval(has_vector, message) == 0, "its vector went with it"
    assert "Lisbon" not in " ".join(words(await memory.recall("Lisbon live")))
    assert "Lisbon" not in " ".join(words(await memory.recall("which city is my home")))
    assert "kimono" in " ".join(words(await memory.recall("kimono")))  # the rest stays

    position = await memory.corrections.forget(tenant=t, principal="ana")
    await memory.formed([position])
    assert (await memory.recall("kimono Japan sister Lisbon")).hits == []
    assert await vectors_of(memory.pool, t, "ana") == []
    assert words(await memory.recall("Japan", principal="bo")) == [
        "I brought sake back from Japan."
    ]


async def test_waiting_for_the_index_returns_once_it_has_read_the_project_and_says_when_not(
    memory: Memory,
) -> None:
    async with reading(memory.pool, principal=(memory.tenant, "ana")) as conn:
        await wait_indexed(conn, tenant=memory.tenant, project="p", timeout_s=WAIT_S)
        with pytest.raises(IndexBehind, match="not formed and indexed"):
            await wait_indexed(conn, tenant=memory.tenant, project="nowhere", timeout_s=0.2)


DEMO_QUESTION = "Who is visiting me, and where might she like to go?"
"""What `make demo` asks (dev/demo.sh) of the example conversation."""


async def test_the_demos_question_is_answered_by_the_principals_own_words(
    isolated: Isolated, pool: asyncpg.Pool, tmp_path: Path
) -> None:
    kafka = isolated.kafka(partitions=1)
    await ensure_topics(kafka)
    episodes = [
        e.model_copy(update={"tenant": isolated.tenant})
        for e in load_episodes(Path(__file__).parents[2] / "examples" / "conversation.jsonl")
    ]
    with running_worker(isolated, log_path=tmp_path / "worker.log", env=isolated.env(partitions=1)):
        memory = Memory(isolated, pool)
        await memory.say(*(e for e in episodes if isinstance(e, TurnAppended)))
        found = await memory.recall(DEMO_QUESTION, project="garden-app")
    messages = [h for h in found.hits if isinstance(h, RecalledMessage)]
    assert messages[0].content.startswith("My sister Marta is visiting next week.")
    assert all(m.own_words for m in messages)
