"""Killed at any point, nothing is lost or doubled: the formation worker and the belief
projector are each SIGKILLed at seeded random points of the ingest and restarted at once; the
projection they end with is the uninterrupted run's, digest for digest, and nothing that should
have formed was parked or dead-lettered.

Two workloads: the main one keeps each principal's projects on one episode partition (so
nothing rewinds; the 20k run); the spanning one puts them on two partitions, so a kill replays
one partition's batches after the other's and the projector must rewind the principal and still
end with the uninterrupted run's projection (``tests/support/fault_workload.py``).
"""

from __future__ import annotations

import json
import random
import time
from pathlib import Path

import pytest

from tests.faults.conftest import SharedLog, finish
from tests.support.conditions import wait_until
from tests.support.databases import drop_database
from tests.support.fault_runs import (
    FaultRun,
    dead_letters,
    formed_count,
    late_arrivals,
)
from tests.support.services import Services

pytestmark = pytest.mark.faults

SEED = 20261130
KILLS = 24
"""At least 20 kill points: half of them the worker's, half the projector's, in seeded order."""


def kill_plan(episodes: int, seed: int = SEED) -> list[tuple[int, str]]:
    """(progress, victim) pairs: kill ``victim`` once that many episodes are projected."""
    rng = random.Random(seed)
    points = sorted(rng.sample(range(episodes // 50, episodes - episodes // 50), KILLS))
    victims = ["worker", "projector"] * (KILLS // 2)
    rng.shuffle(victims)
    return list(zip(points, victims, strict=True))


async def test_the_worker_and_projector_killed_at_random_points_form_the_same_projection(
    shared_log: SharedLog, services: Services, tmp_path: Path
) -> None:
    await _killed_and_restarted(shared_log, services, tmp_path)


async def test_principals_spanning_partitions_killed_at_random_points_form_the_same_projection(
    spanning_log: SharedLog, services: Services, tmp_path: Path
) -> None:
    run = await _killed_and_restarted(spanning_log, services, tmp_path)
    late = await late_arrivals(run.kafka)
    print(json.dumps({"spanning_late_batches": late}))
    assert late > 0, "no batch arrived out of order: the spanning workload tested no rewind"


async def _killed_and_restarted(
    shared_log: SharedLog, services: Services, tmp_path: Path
) -> FaultRun:
    run = await FaultRun.create("kill", shared_log.episodes, services.database_url, tmp_path)
    pool = await run.pool()
    plan = kill_plan(len(shared_log.turns))
    started = time.monotonic()
    try:
        run.start("worker")
        run.start("projector")
        for progress, victim in plan:

            async def reached(target: int = progress) -> bool:
                return await formed_count(pool) >= target

            await wait_until(reached, timeout_s=300, what=f"{progress} projected", poll_s=0.05)
            run.kill(victim)
            run.start(victim)
        result = await finish(run, shared_log, timeout_s=900)
        elapsed = time.monotonic() - started
    finally:
        run.stop()
        await pool.close()

    print(
        json.dumps(
            {
                "episodes": len(shared_log.turns),
                "kills": len(plan),
                "faulted_run_s": round(elapsed, 1),
                "uninterrupted_run_s": round(shared_log.reference_s, 1),
            }
        )
    )
    assert run.starts == {"worker": 1 + KILLS // 2, "projector": 1 + KILLS // 2}
    assert result == shared_log.reference
    assert result["runs"] == len(shared_log.turns) and result["parked"] == 0
    assert await dead_letters(run.kafka) == 0
    await drop_database(services.database_url, run.database_url.rpartition("/")[2])
    return run
