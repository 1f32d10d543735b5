"""The log is the truth: drop the projections, replay the episodic log under the same policy,
and the projected tables are identical — with one principal's candidates arriving from
several projects."""

from __future__ import annotations

from pathlib import Path

import asyncpg
import pytest

from engram.ingest.producer import EpisodeProducer
from engram.ingest.topics import ensure_topics
from engram.projections.beliefs.digest import drop_projections, projection_digest
from engram.projections.reads.queries import list_beliefs
from engram.watermarks.waiting import wait_until_formed
from tests.support.episodes import turn
from tests.support.isolation import Isolated, running_worker

pytestmark = pytest.mark.integration

SESSION = [
    ("garden", "My name is Ana Lima and I live in Lisbon. I prefer concise answers."),
    ("kitchen", "I work at Acme Robotics. I prefer concise answers."),
    ("garden", "My sister Marta lives in Porto. I speak Portuguese and English."),
    ("travel", "I moved to Porto. I no longer have my car."),
    ("kitchen", "I have a bike and a car. We decided to deploy on Fridays."),
    ("travel", "I prefer dark mode. Maybe I will learn Rust."),
    ("garden", "I live in Porto. My password is hunter2, remember it."),
]


async def test_replaying_the_log_into_empty_projections_reproduces_them_exactly(
    isolated: Isolated, pool: asyncpg.Pool, tmp_path: Path
) -> None:
    kafka = isolated.kafka(partitions=1)
    await ensure_topics(kafka)
    turns = [
        turn(isolated.tenant, "ana", project, text, seq=seq, session=f"s{seq // 3}")
        for seq, (project, text) in enumerate(SESSION)
    ]
    async with EpisodeProducer(kafka) as producer:
        await producer.publish_many(turns)
    ids = [t.event_id for t in turns]

    with running_worker(isolated, log_path=tmp_path / "first.log"):
        await wait_until_formed(pool, ids, timeout_s=90)
    first = await projection_digest(pool)
    formed = await list_beliefs(pool, tenant=isolated.tenant, principal="ana", include_all=True)
    assert len({b.origin_scopes[0] for b in formed}) >= 2, "one principal, several projects"
    assert any(b.scope == "user" for b in formed), "corroboration across projects promoted"

    async with pool.acquire() as conn:
        await drop_projections(conn, backlog=True)
    replay = {
        "group_id": f"{kafka.group_id}-replay",
        "claims_topic": f"{kafka.claims_topic}.replay",
    }
    await ensure_topics(isolated.kafka(partitions=1, **replay))
    env = isolated.env(partitions=1, **replay)
    with running_worker(isolated, log_path=tmp_path / "replay.log", env=env):
        await wait_until_formed(pool, ids, timeout_s=90)
    assert await projection_digest(pool) == first
