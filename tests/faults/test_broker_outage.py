"""A Kafka broker stopped mid-run for 30 s and started again with the project's own script:
the worker and the projector recover unattended (neither is restarted), the projection ends
identical to the uninterrupted run's, nothing is parked or dead-lettered, and a reader checking
throughout never sees a formed watermark ahead of what is projected.

The workload keeps each principal's projects on one episode partition (see
``tests/support/fault_workload.py``; a cross-partition ordering limit is fixed separately).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
from pathlib import Path

import httpx
import pytest

from tests.faults.conftest import SharedLog, finish
from tests.support.conditions import wait_until
from tests.support.databases import drop_database
from tests.support.fault_runs import FaultRun, dead_letters, formed_count
from tests.support.http import free_port
from tests.support.kafka_control import check_restartable, kafka_script
from tests.support.services import Services
from tests.support.watermark_reader import WatermarkReader

pytestmark = pytest.mark.faults

OUTAGE_S = 30.0
PUBLISH_STALL_S = 5.0


class ReadinessLog:
    """The worker's /ready answers over time (status, monotonic time)."""

    def __init__(self, url: str):
        self.url = url
        self.answers: list[tuple[float, int]] = []
        self._stop = asyncio.Event()

    async def run(self) -> None:
        async with httpx.AsyncClient(timeout=2.0) as client:
            while not self._stop.is_set():
                try:
                    status = (await client.get(self.url)).status_code
                except httpx.TransportError:
                    status = 0
                self.answers.append((time.monotonic(), status))
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self._stop.wait(), timeout=0.5)

    def stop(self) -> None:
        self._stop.set()

    def first(self, status: int, after: float) -> float | None:
        return next((t for t, s in self.answers if t >= after and s == status), None)


async def test_a_broker_stopped_for_30s_mid_run_recovers_unattended_and_forms_the_same(
    shared_log: SharedLog, services: Services, tmp_path: Path
) -> None:
    bootstrap = services.bootstrap
    await kafka_script("status", bootstrap)  # only a broker this checkout's script started
    check_restartable(bootstrap)
    run = await FaultRun.create(
        "outage",
        shared_log.episodes,
        services.database_url,
        tmp_path,
        ENGRAM_WORKER_PUBLISH_STALL_AFTER_S=str(PUBLISH_STALL_S),
    )
    pool = await run.pool()
    port = free_port()
    reader = WatermarkReader(pool, shared_log.tenant, shared_log.projects)  # type: ignore[arg-type]
    readiness = ReadinessLog(f"http://127.0.0.1:{port}/ready")
    tasks = [asyncio.create_task(reader.run()), asyncio.create_task(readiness.run())]
    figures: dict[str, float] = {}
    try:
        started = time.monotonic()
        run.start("worker", ENGRAM_WORKER_HTTP_PORT=str(port))
        run.start("projector")
        third = len(shared_log.turns) // 3

        async def a_third_projected() -> bool:
            return await formed_count(pool) >= third

        await wait_until(a_third_projected, timeout_s=300, what="a third projected", poll_s=0.05)
        stopping = time.monotonic()
        await kafka_script("down", bootstrap)
        stopped = time.monotonic()
        figures["broker_stop_s"] = stopped - stopping
        await asyncio.sleep(OUTAGE_S)  # the fault itself: how long the broker stays down
        await kafka_script("up", bootstrap)
        up = time.monotonic()
        figures["broker_start_s"] = up - stopped - OUTAGE_S
        before = await formed_count(pool)

        async def projecting_again() -> bool:
            return await formed_count(pool) > before

        await wait_until(projecting_again, timeout_s=300, what="projection resumed", poll_s=0.05)
        figures["projection_resumed_after_up_s"] = time.monotonic() - up
        result = await finish(run, shared_log, timeout_s=900)
        figures["run_s"] = time.monotonic() - started
        assert run.alive(), "a process exited: recovery was not unattended"
        ready_again = readiness.first(200, after=up)
        unready = readiness.first(503, after=stopping)
        figures["worker_unready_after_stop_s"] = (unready - stopping) if unready else -1
        figures["worker_ready_after_up_s"] = (ready_again - up) if ready_again else -1
    finally:
        reader.stop()
        readiness.stop()
        await asyncio.gather(*tasks)
        run.stop()
        await pool.close()

    print(
        json.dumps(
            {"episodes": len(shared_log.turns), **{k: round(v, 1) for k, v in figures.items()}}
        )
    )
    assert reader.violations == []
    assert reader.checks > len(shared_log.projects)
    assert result == shared_log.reference
    assert result["runs"] == len(shared_log.turns) and result["parked"] == 0
    assert await dead_letters(run.kafka) == 0
    assert unready is not None and unready < up, "the worker stayed ready with no broker"
    assert ready_again is not None, "the worker never reported ready after the broker returned"
    await drop_database(services.database_url, run.database_url.rpartition("/")[2])
