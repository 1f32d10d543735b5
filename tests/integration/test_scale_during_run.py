"""Scaling formation workers and projectors 1 → 2 → 1 during a run loses and doubles nothing.

Real subprocesses in their consumer groups over six partitions: one formation worker and one
projector take the first third of the episodes; a second of each joins (both groups rebalance)
for the second third; the first pair is stopped (they rebalance again) for the last third.
Principals speak in projects on different partitions, so their claims reach the claims topic in
an order that depends on all of that. Then the projection is emptied and one `engram worker`
replays the same log into it under another group and claims topic: the digests are equal.
"""

from __future__ import annotations

from contextlib import ExitStack
from pathlib import Path

import asyncpg
import pytest

from engram.ingest.producer import EpisodeProducer
from engram.ingest.topics import ensure_topics
from engram.projections.beliefs.digest import drop_projections, projection_digest
from engram.schemas.episodes import TurnAppended
from engram.watermarks.waiting import wait_until_formed
from tests.support.episodes import turn
from tests.support.http import first_ok, free_port
from tests.support.isolation import Isolated, running_engram, running_worker

pytestmark = pytest.mark.integration

PARTITIONS = 6
CITIES = ["Lisbon", "Porto", "Cork", "Oslo", "Riga"]
TURNS_PER_PROJECT = 9


def workload(tenant: str) -> list[TurnAppended]:
    """Ten principals, each in three projects, nine turns per project; the turns of one
    principal in its three projects share event times, and each turn moves them to a city."""
    return [
        turn(
            tenant,
            f"u{p}",
            f"proj{(p + shift) % 10}",
            f"I live in {CITIES[(p + i + shift) % len(CITIES)]} and I use Tool{i % 4}. "
            f"I prefer {'tea' if (i + shift) % 2 else 'coffee'}.",
            seq=i,
            session=f"s{p}-{shift}",
        )
        for i in range(TURNS_PER_PROJECT)
        for p in range(10)
        for shift in (0, 3, 6)
    ]


@pytest.fixture
def six(isolated: Isolated) -> Isolated:
    return Isolated(isolated.prefix, isolated.bootstrap, isolated.database_url, PARTITIONS)


def _start_pair(stack: ExitStack, isolated: Isolated, logs: Path, name: str) -> list[int]:
    """A formation-only worker and a projector, on a stack of their own; their health ports."""
    ports = []
    for argv, kind in ((("worker", "--no-projector"), "worker"), (("projector",), "projector")):
        port = free_port()
        env = {**isolated.env(), "ENGRAM_WORKER_HTTP_PORT": str(port)}
        log_path = logs / f"{kind}-{name}.log"
        stack.enter_context(running_engram(isolated, *argv, log_path=log_path, env=env))
        ports.append(port)
    return ports


async def _ready(ports: list[int]) -> None:
    for port in ports:
        ready = await first_ok(f"http://127.0.0.1:{port}/ready", deadline_s=90)
        assert ready.json()["ready"] is True


async def test_scaling_workers_and_projectors_up_and_down_mid_run_projects_what_one_does(
    six: Isolated, pool: asyncpg.Pool, tmp_path: Path
) -> None:
    kafka = six.kafka()
    await ensure_topics(kafka)
    turns = workload(six.tenant)
    third = len(turns) // 3
    waves = [turns[:third], turns[third : 2 * third], turns[2 * third :]]

    async with EpisodeProducer(kafka) as producer:
        with ExitStack() as first:
            await _ready(_start_pair(first, six, tmp_path, "first"))
            await producer.publish_many(waves[0])
            await wait_until_formed(pool, [t.event_id for t in waves[0]], timeout_s=120)
            with ExitStack() as second:
                await _ready(_start_pair(second, six, tmp_path, "second"))  # 1 → 2
                await producer.publish_many(waves[1])
                await wait_until_formed(pool, [t.event_id for t in waves[1]], timeout_s=120)
                first.close()  # 2 → 1: the first pair stops, the groups rebalance to the second
                await producer.publish_many(waves[2])
                await wait_until_formed(pool, [t.event_id for t in turns], timeout_s=180)
    scaled = await projection_digest(pool, tenant=six.tenant)
    runs = await pool.fetchval(
        "SELECT count(*) FROM consolidation_run WHERE tenant = $1", six.tenant
    )
    assert runs == len(turns), "one run per episode: nothing lost, nothing doubled"

    async with pool.acquire() as conn:
        await drop_projections(conn, backlog=True)
    single = {"group_id": f"{kafka.group_id}-single", "claims_topic": f"{kafka.claims_topic}.1"}
    await ensure_topics(six.kafka(**single))
    with running_worker(six, log_path=tmp_path / "single.log", env=six.env(**single)):
        await wait_until_formed(pool, [t.event_id for t in turns], timeout_s=180)
    assert await projection_digest(pool, tenant=six.tenant) == scaled
