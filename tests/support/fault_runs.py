"""Runs of the fault suite: one shared episodic log, formed and projected several times — each
run into its own database, through its own consumer groups and claims topic — so a faulted
run's projection can be compared with an uninterrupted run's, digest for digest.

Processes are real (``python -m engram worker --no-projector`` and ``python -m engram
projector``) so that a kill is a SIGKILL of a process, not a cancelled task.
"""

from __future__ import annotations

import os
import secrets
import signal
import subprocess
import sys
import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import asyncpg
from aiokafka import AIOKafkaConsumer, TopicPartition
from aiokafka.admin import AIOKafkaAdminClient

from engram.infra.settings import KafkaSettings, subprocess_env
from engram.ingest.topics import ensure_topics
from engram.projections.beliefs.digest import projection_digest
from engram.resolution.ordering import order_key, principal_of
from engram.schemas.sealed import decode_claims_record
from tests.support.databases import create_database

REPO = Path(__file__).resolve().parents[2]


@dataclass
class FaultRun:
    """One run over the shared log: its database, groups and topics, and its processes."""

    name: str
    kafka: KafkaSettings
    database_url: str
    logs: Path
    extra_env: dict[str, str] = field(default_factory=dict)
    processes: dict[str, subprocess.Popen[bytes]] = field(default_factory=dict)
    starts: dict[str, int] = field(default_factory=dict)

    @classmethod
    async def create(
        cls, name: str, episodes: KafkaSettings, admin_url: str, logs: Path, **extra_env: str
    ) -> FaultRun:
        prefix = f"{name}{secrets.token_hex(3)}"
        kafka = episodes.model_copy(
            update={
                "claims_topic": f"{prefix}.claims",
                "dlq_topic": f"{prefix}.episodes.dlq",
                "memory_events_topic": f"{prefix}.memory-events",
                "group_id": f"{prefix}-formation",
            }
        )
        await ensure_topics(kafka)
        url = await create_database(admin_url, f"engram_{prefix}")
        logs.mkdir(parents=True, exist_ok=True)
        return cls(name, kafka, url, logs, dict(extra_env))

    def env(self, **role_env: str) -> dict[str, str]:
        extra = {
            "ENGRAM_WORKER_HTTP_PORT": "0",
            "ENGRAM_STATE_DIR": str(self.logs / "state"),
            **self.extra_env,
            **role_env,
        }
        return subprocess_env(self.kafka, self.database_url, keys=None, **extra)

    def start(self, role: str, **role_env: str) -> subprocess.Popen[bytes]:
        """Start (or restart) ``role``: ``worker`` (formation only) or ``projector``."""
        argv = ("worker", "--no-projector", "--loglevel", "info") if role == "worker" else (role,)
        self.starts[role] = self.starts.get(role, 0) + 1
        log = (self.logs / f"{self.name}-{role}-{self.starts[role]:02d}.log").open("wb")
        process = subprocess.Popen(
            [sys.executable, "-m", "engram", *argv],
            cwd=REPO,
            env=self.env(**role_env),
            stdout=log,
            stderr=subprocess.STDOUT,
        )
        log.close()  # the child holds its own descriptor
        self.processes[role] = process
        return process

    def kill(self, role: str) -> None:
        """SIGKILL: no shutdown hook runs, nothing is flushed or committed on the way out."""
        process = self.processes[role]
        process.send_signal(signal.SIGKILL)
        process.wait()

    def alive(self) -> bool:
        return all(p.poll() is None for p in self.processes.values())

    def stop(self) -> None:
        for process in self.processes.values():
            if process.poll() is None:
                process.send_signal(signal.SIGTERM)
        for process in self.processes.values():
            try:
                process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()

    async def pool(self) -> asyncpg.Pool:
        pool = await asyncpg.create_pool(self.database_url, min_size=1, max_size=4)
        assert pool is not None
        return pool


async def formed_count(pool: asyncpg.Pool) -> int:
    """Episodes with a committed consolidation run: the projection's progress."""
    return int(await pool.fetchval("SELECT count(*) FROM consolidation_run"))


async def outcome(pool: asyncpg.Pool, tenant: str) -> dict[str, object]:
    """What a run ended with: its digest, what it parked, what it formed."""
    return {
        "digest": await projection_digest(pool, tenant=tenant),
        "parked": await pool.fetchval(
            "SELECT count(*) FROM formation_backlog WHERE state = 'parked'"
        ),
        "runs": await pool.fetchval("SELECT count(DISTINCT episode_id) FROM consolidation_run"),
    }


async def topic_partitions(bootstrap: str, topic: str) -> list[TopicPartition]:
    """Every partition of ``topic``, asked of the broker.

    Not ``AIOKafkaConsumer.partitions_for_topic``: it answers from the consumer's metadata
    cache, which holds only subscribed topics, so it said ``None`` here and a count of dead
    letters built on it was always zero.
    """
    admin = AIOKafkaAdminClient(bootstrap_servers=bootstrap)
    await admin.start()
    try:
        (described,) = await admin.describe_topics([topic])
    finally:
        await admin.close()
    if described["error_code"] != 0 or not described["partitions"]:
        raise AssertionError(f"topic {topic} is not on the broker ({described['error_code']})")
    return [TopicPartition(topic, p["partition"]) for p in described["partitions"]]


async def dead_letters(kafka: KafkaSettings) -> int:
    """How many records the run's dead-letter topic holds."""
    partitions = await topic_partitions(kafka.bootstrap, kafka.dlq_topic)
    consumer = AIOKafkaConsumer(bootstrap_servers=kafka.bootstrap)
    await consumer.start()
    try:
        return sum((await consumer.end_offsets(partitions)).values())
    finally:
        await consumer.stop()


async def late_arrivals(kafka: KafkaSettings) -> int:
    """How many claims batches reached the claims topic after a batch of the same principal
    that belongs after them in canonical order — each one a rewind for the projector."""
    partitions = await topic_partitions(kafka.bootstrap, kafka.claims_topic)
    consumer = AIOKafkaConsumer(bootstrap_servers=kafka.bootstrap, enable_auto_commit=False)
    await consumer.start()
    try:
        ends = await consumer.end_offsets(partitions)
        consumer.assign(partitions)
        await consumer.seek_to_beginning(*partitions)
        newest: dict[tuple[str, str], bytes] = {}
        late = 0
        while [tp for tp in partitions if await consumer.position(tp) < ends[tp]]:
            for records in (await consumer.getmany(timeout_ms=1000)).values():
                for record in records:
                    # sealed or not: the place in canonical order is in the clear fields
                    batch = decode_claims_record(record.value)
                    key, place = principal_of(batch), order_key(batch)
                    if place < newest.get(key, place):
                        late += 1
                    newest[key] = max(place, newest.get(key, place))
        return late
    finally:
        await consumer.stop()


def fault_episodes() -> int:
    """The size of the fault suite's ingest: ``ENGRAM_FAULT_EPISODES`` (``make faults``: 20k)."""
    return int(os.environ.get("ENGRAM_FAULT_EPISODES", "3000"))


def spanning_episodes() -> int:
    """The size of the spanning-principal kill run: ``ENGRAM_FAULT_SPANNING_EPISODES``.

    Half the main workload (``make faults``: 10k): more than half its batches arrive late and
    each rewinds its principal's suffix (docs/benchmarks.md "A late batch").
    """
    return int(os.environ.get("ENGRAM_FAULT_SPANNING_EPISODES", "3000"))


def by_project(
    turns: Sequence[object], offsets: Sequence[int]
) -> dict[str, list[tuple[int, uuid.UUID]]]:
    """Per project, its episodes' (offset, id) in log order."""
    projects: dict[str, list[tuple[int, uuid.UUID]]] = {}
    for turn, offset in zip(turns, offsets, strict=True):
        projects.setdefault(turn.project, []).append((offset, turn.event_id))  # type: ignore[attr-defined]
    return projects
