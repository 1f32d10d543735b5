"""A turn travels the whole way: producer → Kafka → faust formation agent → claims topic →
belief projector → PostgreSQL, on the real broker and database."""

from __future__ import annotations

from pathlib import Path

import asyncpg
import pytest

from engram.formation.spans import quote_at
from engram.ingest.producer import EpisodeProducer
from engram.ingest.topics import ensure_topics
from engram.projections.reads.diagnosis import diagnose_session
from engram.projections.reads.queries import list_beliefs, list_refusals
from engram.watermarks.waiting import wait_until_formed
from tests.support.episodes import turn
from tests.support.isolation import Isolated, running_worker

pytestmark = pytest.mark.integration


async def test_published_turns_form_beliefs_that_quote_their_messages_exactly(
    isolated: Isolated, pool: asyncpg.Pool, tmp_path: Path
) -> None:
    tenant = isolated.tenant
    turns = [
        turn(tenant, "ana", "garden", "My name is Ana and I live in Zürich.", seq=0),
        turn(tenant, "ana", "garden", "I work at Acme Robotics. I prefer dark mode.", seq=1),
        turn(tenant, "bo", "kitchen", "I live in Cork.", seq=2),
    ]
    await ensure_topics(isolated.kafka())
    async with EpisodeProducer(isolated.kafka()) as producer:
        await producer.publish_many(turns)

    with running_worker(isolated, log_path=tmp_path / "worker.log"):
        await wait_until_formed(pool, [t.event_id for t in turns], timeout_s=90)

    beliefs = await list_beliefs(pool, tenant=tenant, principal="ana")
    relations = {(b.relation, b.object) for b in beliefs}
    assert {("has_name", "Ana"), ("lives_in", "Zürich"), ("works_at", "Acme Robotics")} <= relations
    assert any(b.relation == "prefers" for b in beliefs)
    contents = {t.event_id: {m.ordinal: m.content for m in t.messages} for t in turns}
    for belief in beliefs:
        assert belief.evidence, belief.statement
        for evidence in belief.evidence:
            content = contents[evidence.episode_id][evidence.message_ordinal]
            assert evidence.quote in content
            assert quote_at(content, evidence.span_start, evidence.span_end) == evidence.quote
    # Bo's beliefs are Bo's alone.
    assert {b.object for b in await list_beliefs(pool, tenant=tenant, principal="bo")} == {"Cork"}
    assert await list_refusals(pool, tenant=tenant, principal="nobody") == []
    # The backlog knows whose each episode was (by hash) and its session: a session's diagnosis.
    diagnosis = await diagnose_session(pool, tenant=tenant, principal="ana", session="s1")
    assert diagnosis is not None
    assert [e.episode_id for e in diagnosis.episodes] == [t.event_id for t in turns[:2]]
    assert all(e.progress is not None and e.progress.state == "formed" for e in diagnosis.episodes)
