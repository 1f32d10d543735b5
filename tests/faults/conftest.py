"""The fault suite's shared log: the workload published once, and an uninterrupted run of it
whose digest every faulted run must reproduce."""

from __future__ import annotations

import time
from collections.abc import AsyncIterator
from dataclasses import dataclass

import pytest

from engram.infra.settings import KafkaSettings
from engram.ingest.producer import EpisodeProducer
from engram.ingest.topics import ensure_topics
from engram.schemas.api import LogPosition
from engram.schemas.episodes import TurnAppended
from engram.watermarks.waiting import wait_for_watermarks
from tests.support.databases import drop_database
from tests.support.fault_runs import (
    FaultRun,
    by_project,
    fault_episodes,
    outcome,
    spanning_episodes,
)
from tests.support.fault_workload import fault_turns
from tests.support.isolation import new_prefix
from tests.support.services import Services

PARTITIONS = 3


@dataclass(frozen=True)
class SharedLog:
    episodes: KafkaSettings
    tenant: str
    turns: list[TurnAppended]
    appended: list[LogPosition]
    reference: dict[str, object]
    reference_s: float

    @property
    def projects(self) -> dict[str, list[tuple[int, object]]]:
        offsets = [a.offset for a in self.appended]
        return by_project(self.turns, offsets)  # type: ignore[return-value]

    def positions(self) -> list[LogPosition]:
        """Where every episode landed: formed through each project's newest, a run is
        finished."""
        return self.appended


async def finish(run: FaultRun, log: SharedLog, *, timeout_s: float) -> dict[str, object]:
    """Wait until the run has formed through every project's last episode; its outcome."""
    pool = await run.pool()
    try:
        await wait_for_watermarks(pool, log.positions(), timeout_s=timeout_s, poll_s=0.5)
        return await outcome(pool, log.tenant)
    finally:
        await pool.close()


@pytest.fixture(scope="session")
async def shared_log(
    services: Services, tmp_path_factory: pytest.TempPathFactory
) -> AsyncIterator[SharedLog]:
    """The main workload: each principal's projects on one partition (no rewinds)."""
    async for log in _published_and_formed(
        services, tmp_path_factory, episodes=fault_episodes(), spanning=False
    ):
        yield log


@pytest.fixture(scope="session")
async def spanning_log(
    services: Services, tmp_path_factory: pytest.TempPathFactory
) -> AsyncIterator[SharedLog]:
    """Each principal's two projects on different partitions: its batches arrive out of order."""
    async for log in _published_and_formed(
        services, tmp_path_factory, episodes=spanning_episodes(), spanning=True
    ):
        yield log


async def _published_and_formed(
    services: Services, tmp_path_factory: pytest.TempPathFactory, *, episodes: int, spanning: bool
) -> AsyncIterator[SharedLog]:
    """The workload appended once, and an uninterrupted run's outcome over it."""
    prefix = new_prefix()
    settings = KafkaSettings(
        bootstrap=services.bootstrap,
        episodes_topic=f"{prefix}.episodes",
        partitions=PARTITIONS,
        claims_topic=f"{prefix}.claims",
        dlq_topic=f"{prefix}.episodes.dlq",
        memory_events_topic=f"{prefix}.memory-events",
        group_id=f"{prefix}-formation",
    )
    await ensure_topics(settings)
    tenant = f"t-{prefix}"
    turns = fault_turns(tenant, episodes, partitions=PARTITIONS, spanning=spanning)
    async with EpisodeProducer(settings) as producer:
        appended = await producer.publish_many(turns)
    logs = tmp_path_factory.mktemp("reference")
    reference = await FaultRun.create("ref", settings, services.database_url, logs)
    started = time.monotonic()
    reference.start("worker")
    reference.start("projector")
    pending = SharedLog(settings, tenant, turns, appended, {}, 0.0)
    try:
        result = await finish(reference, pending, timeout_s=900)
    finally:
        reference.stop()
    elapsed = time.monotonic() - started
    yield SharedLog(settings, tenant, turns, appended, result, elapsed)
    await drop_database(services.database_url, reference.database_url.rpartition("/")[2])
