"""Scale-out on the engine we have: two formation workers and two belief projectors, each pair
one consumer group over six partitions, project exactly what one worker does.

Both groups are given their members (every process answers /ready with partitions assigned)
before any episode is appended, so both workers form and both projectors project. Then the
projection tables are emptied and one `engram worker` replays the same episodic log into them
under another group and claims topic: the content digests are equal.

Each principal speaks in three projects that sit on different partitions, so the order in which
their claims batches reach the claims topic differs between one worker and two; resolution in
canonical order (engram/resolution/ordering.py) makes the projection the same whatever that order.
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
from tests.support.fault_workload import projects_over_every_partition
from tests.support.http import first_ok, free_port
from tests.support.isolation import Isolated, running_engram, running_worker

pytestmark = pytest.mark.integration

PARTITIONS = 6
CITIES = ["Lisbon", "Porto", "Cork", "Oslo"]


def workload(tenant: str) -> list[TurnAppended]:
    """Twelve principals, each speaking in three of the twelve projects (two on each of the six
    partitions, so a principal's three sit on three partitions): each moves city
    (single-valued, so the order across projects matters), names tools and people. Turns of one
    principal in different projects share event times."""
    projects = projects_over_every_partition(tenant, 12, PARTITIONS)
    return [
        turn(
            tenant,
            f"u{p}",
            projects[(p + shift) % 12],
            f"I live in {CITIES[(p + i + shift) % len(CITIES)]} and I use Tool{i}. "
            f"My sister Marta{p} lives in {CITIES[i % len(CITIES)]}.",
            seq=i,
            session=f"s{i // 3}",
        )
        for p in range(12)
        for shift in (0, 4, 7)
        for i in range(4)
    ]


@pytest.fixture
def six(isolated: Isolated) -> Isolated:
    return Isolated(isolated.prefix, isolated.bootstrap, isolated.database_url, PARTITIONS)


def _with_port(env: dict[str, str]) -> tuple[dict[str, str], int]:
    port = free_port()
    return {**env, "ENGRAM_WORKER_HTTP_PORT": str(port)}, port


def _start_two_of_each(stack: ExitStack, isolated: Isolated, logs: Path) -> list[int]:
    """Two formation-only workers and two projectors; each one's health port."""
    ports = []
    for n in range(2):
        for argv, name in ((("worker", "--no-projector"), "worker"), (("projector",), "projector")):
            env, port = _with_port(isolated.env())
            log_path = logs / f"{name}{n}.log"
            stack.enter_context(running_engram(isolated, *argv, log_path=log_path, env=env))
            ports.append(port)
    return ports


async def test_two_workers_and_two_projectors_project_what_one_worker_does(
    six: Isolated, pool: asyncpg.Pool, tmp_path: Path
) -> None:
    kafka = six.kafka()
    await ensure_topics(kafka)
    turns = workload(six.tenant)
    ids = [t.event_id for t in turns]

    with ExitStack() as stack:
        for port in _start_two_of_each(stack, six, tmp_path):
            # Ready means partitions assigned: both members of each group hold three of six.
            ready = await first_ok(f"http://127.0.0.1:{port}/ready", deadline_s=90)
            assert ready.json()["ready"] is True
        async with EpisodeProducer(kafka) as producer:
            appended = await producer.publish_many(turns)
        assert len({a.partition for a in appended}) == PARTITIONS, "the projects spread over all"
        spans: dict[str, set[int]] = {t.principal: set() for t in turns}
        for t, a in zip(turns, appended, strict=True):
            spans[t.principal].add(a.partition)
        assert all(len(s) == 3 for s in spans.values()), "each principal spans three partitions"
        await wait_until_formed(pool, ids, timeout_s=120)
    scaled = await projection_digest(pool, tenant=six.tenant)

    async with pool.acquire() as conn:
        await drop_projections(conn, backlog=True)
    single = {"group_id": f"{kafka.group_id}-single", "claims_topic": f"{kafka.claims_topic}.1"}
    await ensure_topics(six.kafka(**single))
    with running_worker(six, log_path=tmp_path / "single.log", env=six.env(**single)):
        await wait_until_formed(pool, ids, timeout_s=120)
    assert await projection_digest(pool, tenant=six.tenant) == scaled
