"""Watermarks are honest: the formed watermark never runs past an episode whose beliefs are not
committed, with two workers, a rebalance and a model that answers in random order; a model
outage parks episodes after their attempts and the watermark moves past them; unparking
re-forms them. Real Kafka, real PostgreSQL, a real (local) OpenAI-compatible server."""

from __future__ import annotations

import random
from collections import defaultdict
from pathlib import Path

import asyncpg
import pytest

from engram.ingest.producer import EpisodeProducer
from engram.ingest.topics import ensure_topics
from engram.projections.reads.freshness import freshness
from engram.projections.reads.queries import list_beliefs
from engram.schemas.api import LogPosition
from engram.watermarks.backlog import list_parked, unpark, watermark
from tests.fakes.model_scripts import echo_model
from tests.fakes.openai_server import FakeOpenAIServer
from tests.support.conditions import wait_until
from tests.support.episodes import turn
from tests.support.isolation import Isolated, running_worker
from tests.support.model_env import model_worker_env

pytestmark = pytest.mark.integration

CITIES = ["Lisbon", "Porto", "Cork", "Oslo", "Riga", "Turin", "Quito", "Bergen"]


async def _violations(
    pool: asyncpg.Pool, tenant: str, appended: dict[str, list[LogPosition]]
) -> list[str]:
    """In one snapshot: each project's watermark, and whether every episode at or below it has
    committed beliefs (a run) or is parked."""
    found = []
    async with pool.acquire() as conn, conn.transaction(isolation="repeatable_read"):
        for project, positions in appended.items():
            mark = await watermark(conn, tenant=tenant, project=project)
            if mark.formed_offset is None:
                continue
            below = [a.offset for a in positions if a.offset <= mark.formed_offset]
            done = await conn.fetchval(
                "SELECT count(*) FROM consolidation_run WHERE tenant = $1 AND project = $2 "
                "AND source_offset = ANY($3)",
                tenant,
                project,
                below,
            )
            parked = await conn.fetchval(
                "SELECT count(*) FROM formation_backlog WHERE tenant = $1 AND project = $2 "
                "AND state = 'parked' AND \"offset\" = ANY($3)",
                tenant,
                project,
                below,
            )
            if done + parked < len(below):
                found.append(f"{project}: formed_offset {mark.formed_offset} passes unformed")
    return found


async def _all_formed(
    pool: asyncpg.Pool, tenant: str, appended: dict[str, list[LogPosition]]
) -> bool:
    for project, positions in appended.items():
        mark = await watermark(pool, tenant=tenant, project=project)
        if not mark.formed_through(max(a.offset for a in positions)):
            return False
    return True


async def test_the_formed_watermark_never_passes_an_unformed_episode(
    isolated: Isolated, pool: asyncpg.Pool, tmp_path: Path
) -> None:
    kafka = isolated.kafka(partitions=2)
    await ensure_topics(kafka)
    rng = random.Random(1234)
    delays = {city: rng.uniform(0.0, 0.25) for city in CITIES}
    turns = [
        turn(
            isolated.tenant,
            f"u{p}",
            f"proj{p}",
            f"I live in {CITIES[(p + i) % 8]}.",
            seq=i * 16 + p,
        )
        for i in range(6)
        for p in range(12)
    ]
    appended: dict[str, list[LogPosition]] = defaultdict(list)
    async with FakeOpenAIServer(
        echo_model(delay=lambda c: delays[c.split()[-1].rstrip(".")])
    ) as server:
        env = model_worker_env(isolated.env(partitions=2), server)
        with running_worker(isolated, log_path=tmp_path / "a.log", env=env):
            async with EpisodeProducer(kafka) as producer:
                for t in turns[:36]:
                    appended[t.project].append(await producer.publish(t))
            with running_worker(isolated, log_path=tmp_path / "b.log", env=env):
                async with EpisodeProducer(kafka) as producer:
                    for t in turns[36:]:
                        appended[t.project].append(await producer.publish(t))
                checks = 0

                async def formed_and_honest() -> bool:
                    nonlocal checks
                    assert await _violations(pool, isolated.tenant, appended) == []
                    checks += 1
                    return await _all_formed(pool, isolated.tenant, appended)

                await wait_until(
                    formed_and_honest, timeout_s=120, what="every episode formed", poll_s=0.02
                )
    assert await _violations(pool, isolated.tenant, appended) == []
    assert checks > 5, "the invariant was checked while formation was in progress"
    runs = await pool.fetchval("SELECT count(DISTINCT episode_id) FROM consolidation_run")
    assert runs == len(turns)


async def test_an_outage_parks_episodes_the_watermark_moves_past_and_unpark_reforms_them(
    isolated: Isolated, pool: asyncpg.Pool, tmp_path: Path
) -> None:
    kafka = isolated.kafka(partitions=1)
    await ensure_topics(kafka)
    outage = {"on": True}
    failing = [
        turn(isolated.tenant, "ana", "down", f"I live in {c}.", seq=i)
        for i, c in enumerate(["Lisbon", "Porto"])
    ]
    healthy = [
        turn(isolated.tenant, "bo", "up", f"I live in {c}.", seq=10 + i)
        for i, c in enumerate(["Oslo", "Riga"])
    ]

    def is_failing(content: str) -> bool:
        return outage["on"] and ("Lisbon" in content or "Porto" in content)

    async with FakeOpenAIServer(echo_model(failing=is_failing)) as server:
        env = model_worker_env(
            isolated.env(partitions=1),
            server,
            max_attempts="3",
            retry_after_s="0.5",
            requeue_poll_s="0.2",
        )
        with running_worker(isolated, log_path=tmp_path / "w.log", env=env):
            async with EpisodeProducer(kafka) as producer:
                down = [await producer.publish(t) for t in failing]
                up = [await producer.publish(t) for t in healthy]
            # The healthy project forms while the failing one is still retrying.
            await wait_until(
                lambda: _formed(pool, isolated.tenant, "up", up[-1].offset),
                timeout_s=60,
                what="formed through the last offset",
            )
            assert (await watermark(pool, tenant=isolated.tenant, project="down")).parked == 0

            await wait_until(
                lambda: _formed(pool, isolated.tenant, "down", down[-1].offset),
                timeout_s=60,
                what="formed through the last offset",
            )
            fresh = await freshness(pool, tenant=isolated.tenant, project="down")
            assert fresh.parked == 2 and fresh.formed_offset == down[-1].offset
            parked = await list_parked(pool, tenant=isolated.tenant, project="down")
            assert [(p.attempts, p.failure_kind) for p in parked] == [(3, "http_status")] * 2
            assert await list_beliefs(pool, tenant=isolated.tenant, principal="ana") == []

            outage["on"] = False
            for episode in parked:
                assert (
                    await unpark(
                        pool,
                        tenant=isolated.tenant,
                        project="down",
                        episode_id=episode.episode_id,
                        actor="test",
                    )
                    == 1
                )
            assert (
                await watermark(pool, tenant=isolated.tenant, project="down")
            ).formed_offset is None
            await wait_until(
                lambda: _formed(pool, isolated.tenant, "down", down[-1].offset),
                timeout_s=60,
                what="formed through the last offset",
            )

    beliefs = await list_beliefs(pool, tenant=isolated.tenant, principal="ana", include_all=True)
    assert {b.object for b in beliefs} == {"Lisbon", "Porto"}
    audit = await pool.fetch("SELECT action, actor FROM formation_audit")
    assert [(r["action"], r["actor"]) for r in audit] == [("unpark", "test")] * 2


async def _formed(pool: asyncpg.Pool, tenant: str, project: str, offset: int) -> bool:
    return (await watermark(pool, tenant=tenant, project=project)).formed_through(offset)
