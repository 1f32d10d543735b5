"""Throughput of formation, against a raw baseline measured in the same run.

Publishes N synthetic turns (realistic length, several projects and principals) to fresh
topics, then measures:
  (a) raw      — the same records consumed with aiokafka and written with asyncpg COPY;
  (core)       — the pure formation core alone, in process (no Kafka): the extraction cost;
  (b) agent    — the faust formation agent alone (turns in, claims batches out);
  (framework)  — the same agent with the core's answers computed before the run
                 (bench/framework_worker.py): what the agent costs around the core;
  (floor)      — faust alone on the same app settings: read, send on, ack (bench/faust_floor.py);
  (projector)  — the belief projector alone, in process, over the batches (b) published;
  (c) end2end  — from first publish until every turn is formed and committed in PostgreSQL,
                 with one `engram worker`, and again with formation and projection in separate
                 processes (`engram worker --no-projector` + `engram projector`).
Prints JSON with the rates and the ratios b/a and c/a. Machines are noisy: read the ratios.
It also prints what issue 13's projector target (0.025 of raw) would take on this machine at
the projector's measured CPU a batch (:func:`cores_at_target`): the cores it and its
PostgreSQL backends would keep busy, and the share of the projector's one Python thread.

    .venv/bin/python bench/throughput.py [--turns 5000]
    .venv/bin/python bench/throughput.py --turns 3000 --core-only 3 --baseline-root ../main
                                                    # the core alone, alternated with main
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import secrets
import signal
import socket
import statistics
import subprocess
import sys
import time
import urllib.request
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

import asyncpg
import orjson
from aiokafka import AIOKafkaConsumer
from pydantic import SecretStr

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))  # this checkout's code, not an installed copy's

from engram.formation.policy import FormationPolicy  # noqa: E402
from engram.generations.runtime import end_offsets  # noqa: E402
from engram.infra.db import leave_session_as_is  # noqa: E402
from engram.infra.heap import collect_young_less_often, freeze_startup_heap  # noqa: E402
from engram.infra.settings import KafkaSettings, KeysSettings, load_settings, subprocess_env  # noqa: E402
from engram.ingest.producer import EpisodeProducer  # noqa: E402
from engram.ingest.topics import ensure_topics  # noqa: E402
from engram.keys.kek import new_kek_text  # noqa: E402
from engram.projections.beliefs.projector import (  # noqa: E402
    DEFAULT_LANES,
    DEFAULT_MAX_CHUNK,
    BeliefProjector,
)
from engram.projections.migrate import migrate  # noqa: E402
from engram.resolution.chunk import BatchOutcome  # noqa: E402
from engram.schemas.claims import SourcePosition  # noqa: E402
from engram.schemas.episodes import Message, TurnAppended  # noqa: E402
from engram.sealing.events import LogSealer  # noqa: E402
from engram.sealing.opening import open_sealer  # noqa: E402
from engram.streams.formation_stage import FormationStage  # noqa: E402

SENTENCES = [
    "My name is {name} and I live in {city}.",
    "I work at {org} as a {role}.",
    "I prefer {pref} when we talk about the rollout plan.",
    "Could you summarise the meeting notes from yesterday for me?",
    "We decided to deploy the {project} service on Fridays after the standup.",
    "I speak Portuguese and English, and I'm learning German.",
    "The build failed again on the integration step; can you look at the logs?",
    "My sister {sibling} is visiting next week, so I'll be offline on Thursday.",
]
NAMES = ["Ana", "Bo", "Chen", "Dara", "Eli", "Femi", "Gus", "Hana"]
CITIES = ["Lisbon", "Cork", "Berlin", "Porto", "Oslo", "Turin", "Riga", "Quito"]


def synthetic_turns(count: int, tenant: str) -> list[TurnAppended]:
    start = datetime(2026, 1, 1, tzinfo=UTC)
    turns = []
    for i in range(count):
        who = NAMES[i % len(NAMES)]
        text = " ".join(
            SENTENCES[(i + k) % len(SENTENCES)].format(
                name=who,
                city=CITIES[(i // 7) % len(CITIES)],
                org="Acme Robotics",
                role="data engineer",
                pref="concise answers",
                project=f"p{i % 16}",
                sibling="Marta",
            )
            for k in range(3)
        )
        messages = [
            Message(ordinal=0, role="user", content=text),
            Message(ordinal=1, role="assistant", content="Noted. " + text[:120]),
        ]
        turns.append(
            TurnAppended(
                event_id=uuid.uuid5(uuid.NAMESPACE_URL, f"bench/{tenant}/{i}"),
                tenant=tenant,
                principal=who.lower(),
                project=f"p{i % 16}",
                session=f"s{i // 20}",
                occurred_at=start + timedelta(seconds=i),
                messages=messages,
            )
        )
    return turns


async def measure_raw(
    kafka: KafkaSettings, db_url: str, count: int, *, topic: str | None = None, passes: int = 3
) -> float:
    """Records/s of a plain aiokafka consume of ``topic`` (default: the episodes) with an asyncpg
    COPY of the raw bytes: the floor any consumer writing to PostgreSQL starts from.

    The best of ``passes`` reads of the same records, each by a fresh consumer from the start:
    one pass over a few thousand records lasts tens of milliseconds, so a single stall (a WAL
    flush, another process on the two cores) moved it 2-3x between runs and every ratio with it.
    The best pass is the floor's capability; the stalls are the machine's."""
    conn = await asyncpg.connect(db_url)
    await conn.execute("CREATE TABLE IF NOT EXISTS bench_raw (part int, off bigint, value bytea)")
    topic = topic or kafka.episodes_topic
    try:
        rates = []
        for _ in range(passes):
            await conn.execute("TRUNCATE bench_raw")
            rates.append(await _raw_pass(kafka, conn, count, topic))
        return max(rates)
    finally:
        await conn.close()


async def _raw_pass(
    kafka: KafkaSettings, conn: asyncpg.Connection, count: int, topic: str
) -> float:
    consumer = AIOKafkaConsumer(
        topic, bootstrap_servers=kafka.bootstrap, auto_offset_reset="earliest", group_id=None
    )
    await consumer.start()
    seen, started = 0, time.perf_counter()
    try:
        while seen < count:
            batch = await consumer.getmany(timeout_ms=500, max_records=5000)
            rows = [(r.partition, r.offset, r.value) for recs in batch.values() for r in recs]
            if rows:
                await conn.copy_records_to_table("bench_raw", records=rows)
                seen += len(rows)
        return count / (time.perf_counter() - started)
    finally:
        await consumer.stop()


async def measure_core(turns: list[TurnAppended]) -> tuple[float, float]:
    """Turns/s of the core alone, and its CPU seconds per turn."""
    stage = FormationStage(FormationPolicy())
    started, cpu = time.perf_counter(), time.process_time()
    for offset, episode in enumerate(turns):
        await stage.form(episode, SourcePosition(topic="bench", partition=0, offset=offset))
    cpu_per_turn = (time.process_time() - cpu) / len(turns)
    return len(turns) / (time.perf_counter() - started), cpu_per_turn


def cpu_seconds(pid: int) -> float:
    """User plus system CPU time a process has used so far (Linux /proc)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def embedder_children(pid: int) -> list[int]:
    """The ``engram embedder`` children of process ``pid`` (Linux /proc)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text().rpartition(")")[2].split()
            command = (entry / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if int(stat[1]) == pid and b"embedder" in command:
            found.append(int(entry.name))
    return found


@dataclass
class EndToEndRun:
    """Turns/s end to end, and over the same stretch the CPU a turn of each process (by the
    name it was given), of the PostgreSQL backends serving the run's database (``postgres``:
    the worker's backlog writes and the projector's chunks together), and the cores the whole
    machine kept busy. On two cores these say which side took the CPU the slower stage lacked."""

    per_s: float
    cpu_us_per_turn: dict[str, float]
    busy_cores: float


async def measure_end_to_end(
    processes: dict[str, subprocess.Popen[bytes]],
    kafka: KafkaSettings,
    db_url: str,
    turns: list[TurnAppended],
    run: str,
    *,
    sealer: LogSealer | None = None,
    after: Callable[[], Awaitable[None]] | None = None,
) -> EndToEndRun:
    """Turns/s from the first publish until every turn's run is committed, once a warm-up turn
    has gone all the way through the given processes; ``after`` runs once that is measured,
    before the processes stop."""
    try:
        warmup = synthetic_turns(1, tenant=run + "warm")
        async with EpisodeProducer(kafka, sealer) as producer:
            await producer.publish_many(warmup)
            await wait_runs(db_url, 1, deadline_s=120)
            backends = await _backends(db_url)
            cpu = {name: cpu_seconds(p.pid) for name, p in processes.items()}
            cpu_backends = {pid: _postgres_cpu({pid}) for pid in backends}
            busy_at, started = machine_busy(), time.perf_counter()
            await producer.publish_many(turns)
        await wait_runs(db_url, len(turns) + 1, deadline_s=900)
        wall = time.perf_counter() - started
        used = {name: cpu_seconds(p.pid) - cpu[name] for name, p in processes.items()}
        busy = machine_busy() - busy_at
        # A backend opened during the run started from nothing; one closed during it is lost.
        backends |= await _backends(db_url)
        used["postgres"] = sum(
            max(0.0, _postgres_cpu({pid}) - cpu_backends.get(pid, 0.0)) for pid in backends
        )
        if after is not None:
            await after()
        return EndToEndRun(
            len(turns) / wall,
            {name: round(1e6 * seconds / len(turns), 1) for name, seconds in used.items()},
            round(busy / wall, 2),
        )
    finally:
        for process in processes.values():
            stop(process)


async def _backends(db_url: str) -> set[int]:
    """The PostgreSQL backends connected to ``db_url``'s database, but the one asking."""
    conn = await asyncpg.connect(db_url)
    try:
        rows = await conn.fetch(
            "SELECT pid FROM pg_stat_activity "
            "WHERE datname = current_database() AND pid <> pg_backend_pid()"
        )
        return {row["pid"] for row in rows}
    finally:
        await conn.close()


@dataclass
class ProjectorRun:
    """Batches/s of one projector run: from its start (consumer group join, assignment and the
    seek to the stored offsets included), and from its first projected chunk to its last (the
    rate once running; the raw baseline joins no group). Over that steady stretch too: the
    projector process's CPU (its Python, asyncpg's encoding, the Kafka client) and the CPU of
    the PostgreSQL backends serving its pool, per batch. On two cores these say whether the
    two sides take turns (their sum near the wall time a batch) or one of them is the limit,
    and CPU time moves far less with other load on the machine than the rates do."""

    per_s: float
    steady_per_s: float
    cpu_us_per_batch: float = 0.0
    postgres_cpu_us_per_batch: float = 0.0
    wall_us_per_batch: float = 0.0
    busy_cores: float = 0.0


PROJECTOR_TARGET_OVER_RAW = 0.025
"""Issue 13's target for the projector alone: batches/s as a share of the raw baseline."""


def cores_at_target(
    raw_per_s: float, run: ProjectorRun, over_raw: float = PROJECTOR_TARGET_OVER_RAW
) -> dict[str, float]:
    """What running the projector at ``over_raw`` of the raw baseline would cost here, at the
    CPU a batch it was measured to take over its steady stretch.

    ``cores_at_target`` adds the projector's CPU and its PostgreSQL backends' CPU: when it
    exceeds the cores of the machine, no overlap of the two can reach the target, and the
    Kafka broker, which also needs CPU, is not even counted. ``projector_thread_at_target``
    is the share of the projector's one Python thread the target needs: above 1, no number of
    cores reaches it either. Both are lower bounds: CPU a batch rises under contention."""
    rate = over_raw * raw_per_s
    return {
        "projector_target_per_s": round(rate, 1),
        "cores_at_target": round(
            rate * (run.cpu_us_per_batch + run.postgres_cpu_us_per_batch) / 1e6, 2
        ),
        "projector_thread_at_target": round(rate * run.cpu_us_per_batch / 1e6, 2),
        "cores": float(os.cpu_count() or 1),
    }


def machine_busy() -> float:
    """CPU seconds every core of this machine has spent busy so far (``/proc/stat``: all but
    idle and iowait), to tell a run with a core to spare from one that filled the machine."""
    ticks = [int(n) for n in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
    idle = ticks[3] + ticks[4]
    return (sum(ticks[:8]) - idle) / os.sysconf("SC_CLK_TCK")


def _postgres_cpu(pids: set[int]) -> float:
    """CPU seconds the PostgreSQL backends ``pids`` have used (0 for one that is gone, or that
    this machine cannot see: a server elsewhere)."""
    total = 0.0
    for pid in pids:
        with contextlib.suppress(OSError):
            total += cpu_seconds(pid)
    return total


async def measure_projector(
    kafka: KafkaSettings,
    db_url: str,
    count: int,
    *,
    lanes: int = DEFAULT_LANES,
    max_chunk: int = DEFAULT_MAX_CHUNK,
) -> ProjectorRun:
    """The belief projector alone, over the claims the agent stage published, with ``lanes``
    lanes per partition (the default of ``engram projector``)."""
    backends: set[int] = set()

    async def note_backend(conn: asyncpg.Connection) -> None:
        backends.add(conn.get_server_pid())

    # As `engram projector` makes its pool (projections/runner.py): no reset on release.
    pool = await asyncpg.create_pool(
        db_url, min_size=1, max_size=4, init=note_backend, reset=leave_session_as_is
    )
    projector: BeliefProjector
    first: list[tuple[float, int, float, float, float]] = []

    def stop_when_done(_: BatchOutcome) -> None:
        if not first:
            first.append(
                (
                    time.perf_counter(),
                    projector.projected,
                    time.process_time(),
                    _postgres_cpu(backends),
                    machine_busy(),
                )
            )
        if projector.projected >= count:
            projector.stop()

    projector = BeliefProjector(
        kafka, pool, on_outcome=stop_when_done, lanes=lanes, max_chunk=max_chunk
    )
    freeze_startup_heap()  # as `engram projector` does; the bench's own data is start-up heap
    collect_young_less_often()  # as `engram projector` does too
    started = time.perf_counter()
    try:
        await asyncio.wait_for(projector.run(), timeout=600)
        ended, cpu_ended, postgres_ended, busy_ended = (
            time.perf_counter(),
            time.process_time(),
            _postgres_cpu(backends),
            machine_busy(),
        )
        # Outcomes are reported after a chunk commits: the first one marks the first chunk's
        # end, so the steady rate counts the batches after it.
        first_at, first_count, cpu_at, postgres_at, busy_at = first[0]
        steady = count - first_count
        return ProjectorRun(
            count / (ended - started),
            steady / (ended - first_at),
            cpu_us_per_batch=1e6 * (cpu_ended - cpu_at) / steady,
            postgres_cpu_us_per_batch=1e6 * (postgres_ended - postgres_at) / steady,
            wall_us_per_batch=1e6 * (ended - first_at) / steady,
            busy_cores=(busy_ended - busy_at) / (ended - first_at),
        )
    finally:
        await pool.close()


async def measure_script(
    base: KafkaSettings, admin_url: str, turns: list[TurnAppended], name: str, *argv: str
) -> ClaimsSeen:
    """A bench worker script (``bench/<argv[0]>``) over the same turns on fresh topics, until it
    has published one record per turn to the claims topic."""
    kafka, db_url = await fresh(base, admin_url, name)
    async with EpisodeProducer(kafka) as producer:
        await producer.publish_many(turns)
    log = (REPO / ".dev" / f"bench-{name}.log").open("wb")
    worker = subprocess.Popen(
        [sys.executable, str(REPO / "bench" / argv[0]), *argv[1:]],
        cwd=REPO,
        env=env_for(kafka, db_url),
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    try:
        return await count_claims(kafka, len(turns), deadline_s=600, pid=worker.pid)
    finally:
        stop(worker)


def start_worker(env: dict[str, str], *args: str) -> subprocess.Popen[bytes]:
    return start_engram(env, "worker", *args)


def start_engram(env: dict[str, str], *argv: str) -> subprocess.Popen[bytes]:
    log = (REPO / ".dev" / f"bench-{argv[0]}-{secrets.token_hex(3)}.log").open("wb")
    return subprocess.Popen(
        [sys.executable, "-m", "engram", *argv],
        cwd=REPO,
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
    )


def stop(process: subprocess.Popen[bytes]) -> None:
    process.send_signal(signal.SIGTERM)
    try:
        process.wait(timeout=30)
    except subprocess.TimeoutExpired:
        process.kill()


@dataclass
class ClaimsSeen:
    """How ``want`` claims batches came out: seconds from first to last by broker timestamps,
    and the producing process's CPU seconds between the first and the last batch seen."""

    seconds: float
    cpu_seconds: float = 0.0
    cpu_turns: int = 0

    @property
    def cpu_per_turn(self) -> float:
        return self.cpu_seconds / self.cpu_turns if self.cpu_turns else float("nan")


async def count_claims(
    kafka: KafkaSettings, want: int, deadline_s: float, *, pid: int | None = None
) -> ClaimsSeen:
    """Wait for ``want`` claims batches; with ``pid``, sample that process's CPU time when the
    first batch is seen and when the last is (startup and shutdown are left out)."""
    consumer = AIOKafkaConsumer(
        kafka.claims_topic,
        bootstrap_servers=kafka.bootstrap,
        auto_offset_reset="earliest",
        group_id=None,
    )
    await consumer.start()
    stamps: list[int] = []
    first_cpu, first_seen = 0.0, 0
    deadline = time.monotonic() + deadline_s
    try:
        while len(stamps) < want and time.monotonic() < deadline:
            for records in (await consumer.getmany(timeout_ms=500)).values():
                stamps += [r.timestamp for r in records]
            if pid is not None and stamps and not first_seen:
                first_cpu, first_seen = cpu_seconds(pid), len(stamps)
        last_cpu = cpu_seconds(pid) if pid is not None else 0.0
    finally:
        await consumer.stop()
    if len(stamps) < want:
        raise RuntimeError(f"only {len(stamps)} of {want} batches appeared")
    return ClaimsSeen((max(stamps) - min(stamps)) / 1000, last_cpu - first_cpu, want - first_seen)


PLAINTEXT = KeysSettings(kek=None, kek_file=None, encrypt_log=False)
"""The benchmarks' baseline: the log in clear, as every number in docs/benchmarks.md before log
encryption became the default was measured; a sealed arm adds its KEK and turns it on."""


def env_for(kafka: KafkaSettings, db_url: str) -> dict[str, str]:
    # No health endpoints: two processes of one measurement would share a port.
    return subprocess_env(kafka, db_url, keys=PLAINTEXT, ENGRAM_WORKER_HTTP_PORT="0")


async def fresh(
    base: KafkaSettings, admin_url: str, name: str, *, partitions: int = 1
) -> tuple[KafkaSettings, str]:
    kafka = base.model_copy(
        update={
            "episodes_topic": f"{name}.episodes",
            "claims_topic": f"{name}.claims",
            "dlq_topic": f"{name}.dlq",
            "memory_events_topic": f"{name}.events",
            "group_id": f"{name}-formation",
            "partitions": partitions,
        }
    )
    await ensure_topics(kafka)
    conn = await asyncpg.connect(admin_url)
    await conn.execute(f'CREATE DATABASE "{name}"')
    await conn.close()
    db_url = admin_url.rpartition("/")[0] + f"/{name}"
    conn = await asyncpg.connect(db_url)
    await migrate(conn)
    await conn.close()
    return kafka, db_url


async def wait_runs(db_url: str, want: int, deadline_s: float) -> None:
    conn = await asyncpg.connect(db_url)
    deadline = time.monotonic() + deadline_s
    try:
        while await conn.fetchval("SELECT count(*) FROM consolidation_run") < want:
            if time.monotonic() > deadline:
                raise RuntimeError("end-to-end run did not finish in time")
            await asyncio.sleep(0.05)
    finally:
        await conn.close()


async def main(count: int) -> dict[str, object]:
    settings = load_settings()
    admin_url = settings.database.url.get_secret_value()
    run = "bench" + secrets.token_hex(3)
    turns = synthetic_turns(count, tenant=run)
    kafka_b, db_b = await fresh(settings.kafka, admin_url, run + "b")
    kafka_c, db_c = await fresh(settings.kafka, admin_url, run + "c")
    async with EpisodeProducer(kafka_b) as producer:
        await producer.publish_many(turns)

    raw = await measure_raw(kafka_b, db_b, count)
    core, core_cpu = await measure_core(turns)

    agent = start_worker(env_for(kafka_b, db_b), "--no-projector")
    try:
        seen = await count_claims(kafka_b, count, deadline_s=600, pid=agent.pid)
    finally:
        stop(agent)
    agent_seconds = seen.seconds
    projector = await measure_projector(kafka_b, db_b, count)
    framework = await measure_script(
        settings.kafka, admin_url, turns, run + "f", "framework_worker.py", run, str(count)
    )
    floor = await measure_script(settings.kafka, admin_url, turns, run + "g", "faust_floor.py")

    end_to_end = await measure_end_to_end(
        {"worker": start_worker(env_for(kafka_c, db_c))}, kafka_c, db_c, turns, run
    )
    kafka_d, db_d = await fresh(settings.kafka, admin_url, run + "d")
    env_d = env_for(kafka_d, db_d)
    two_processes = await measure_end_to_end(
        {
            "agent": start_worker(env_d, "--no-projector"),
            "projector": start_engram(env_d, "projector"),
        },
        kafka_d,
        db_d,
        turns,
        run,
    )

    agent_rate = count / agent_seconds if agent_seconds else float("inf")
    return {
        "turns": count,
        "raw_aiokafka_copy_per_s": round(raw, 1),
        "core_only_per_s": round(core, 1),
        "agent_per_s": round(agent_rate, 1),
        "projector_only_per_s": round(projector.per_s, 1),
        "projector_steady_per_s": round(projector.steady_per_s, 1),
        "projector_over_raw": round(projector.per_s / raw, 4),
        "projector_steady_over_raw": round(projector.steady_per_s / raw, 4),
        # Over the projector's steady stretch: its CPU and its PostgreSQL backends', a batch.
        "projector_cpu_us_per_batch": round(projector.cpu_us_per_batch, 1),
        "postgres_cpu_us_per_batch": round(projector.postgres_cpu_us_per_batch, 1),
        **cores_at_target(raw, projector),
        "end_to_end_per_s": round(end_to_end.per_s, 1),
        "end_to_end_two_processes_per_s": round(two_processes.per_s, 1),
        # The two processes' run: CPU a turn of each process and of PostgreSQL, busy cores.
        "two_processes_cpu_us_per_turn": two_processes.cpu_us_per_turn,
        "two_processes_busy_cores": two_processes.busy_cores,
        "agent_over_raw": round(agent_rate / raw, 4),
        "end_to_end_over_raw": round(end_to_end.per_s / raw, 4),
        "framework_us_per_turn": round(1e6 / agent_rate - 1e6 / core, 1),
        # The agent with the core's answers computed in advance: the framework alone, measured.
        "framework_only_per_s": round(count / framework.seconds, 1),
        "framework_only_us_per_turn": round(1e6 * framework.seconds / count, 1),
        "framework_only_cpu_us_per_turn": round(1e6 * framework.cpu_per_turn, 1),
        # faust alone: read, send the value on, ack on the acknowledgement (bench/faust_floor.py).
        "faust_floor_us_per_turn": round(1e6 * floor.seconds / count, 1),
        "faust_floor_cpu_us_per_turn": round(1e6 * floor.cpu_per_turn, 1),
        "core_us_per_turn": round(1e6 / core, 1),
        # The same difference in CPU time, which other load on the machine disturbs less.
        "framework_cpu_us_per_turn": round(1e6 * (seen.cpu_per_turn - core_cpu), 1),
        "agent_cpu_us_per_turn": round(1e6 * seen.cpu_per_turn, 1),
        "core_cpu_us_per_turn": round(1e6 * core_cpu, 1),
    }


_CORE_CHILD = """
import asyncio, importlib.util, json, sys
root, turns = sys.argv[1], int(sys.argv[2])
sys.path.insert(0, root)
spec = importlib.util.spec_from_file_location("rooted_throughput", root + "/bench/throughput.py")
rooted = importlib.util.module_from_spec(spec)
sys.modules["rooted_throughput"] = rooted
spec.loader.exec_module(rooted)
rate, cpu = asyncio.run(rooted.measure_core(rooted.synthetic_turns(turns, "bench")))
print(json.dumps({"core_us_per_turn": round(1e6 / rate, 1), "core_cpu_us_per_turn": round(1e6 * cpu, 1)}))
"""
"""``core_us_per_turn`` and ``core_cpu_us_per_turn`` of a checkout's core as :func:`main`
measures them (one pass over the synthetic turns, first turn included), in a fresh interpreter
that imports nothing of Engram before the checkout is first on its path: its own
``bench/throughput.py`` is loaded, so its own code forms."""


def core_rounds(turns: int, rounds: int, baseline: Path | None) -> dict[str, object]:
    """Rounds of this checkout's core and ``baseline``'s, one after the other in each round, so
    both meet the same machine; the medians and their ratio."""
    sides = {"this": REPO, **({"baseline": baseline.resolve()} if baseline else {})}
    measured: dict[str, list[dict[str, float]]] = {side: [] for side in sides}
    for _ in range(rounds):
        for side, root in sides.items():
            command = [sys.executable, "-c", _CORE_CHILD, str(root), str(turns)]
            out = subprocess.run(command, check=True, capture_output=True, text=True).stdout
            measured[side].append(orjson.loads(out.strip().splitlines()[-1]))
    report: dict[str, object] = {"turns": turns, "rounds": rounds}
    for side, runs in measured.items():
        for key in ("core_us_per_turn", "core_cpu_us_per_turn"):
            values = [run[key] for run in runs]
            report[f"{side}_{key}"] = values
            report[f"{side}_{key}_median"] = statistics.median(values)
    if baseline:
        for key in ("core_us_per_turn", "core_cpu_us_per_turn"):
            report[f"this_over_baseline_{key}"] = round(
                statistics.median(r[key] for r in measured["this"])
                / statistics.median(r[key] for r in measured["baseline"]),
                3,
            )
    return report


async def sealer_for(db_url: str, kek: str) -> tuple[asyncpg.Pool, LogSealer]:
    pool = await asyncpg.create_pool(db_url, min_size=1, max_size=4)
    sealer = await open_sealer(KeysSettings(kek=SecretStr(kek), encrypt_log=True), pool)
    assert isinstance(sealer, LogSealer)
    return pool, sealer


async def measure_end_to_end_sealed(
    kafka: KafkaSettings,
    db_url: str,
    turns: list[TurnAppended],
    run: str,
    kek: str,
    counted: dict[str, float] | None = None,
) -> EndToEndRun:
    """:func:`measure_end_to_end` with log encryption on: the producer seals every turn (as
    the doors do), the worker opens them and seals the claims batches. With ``counted``, the
    worker serves its metrics, and once the run is measured and the index and the vectors
    have read the whole log, what its counters say fills ``counted``
    (:func:`worker_counts`)."""
    pool, sealer = await sealer_for(db_url, kek)
    env = env_for(kafka, db_url) | {"ENGRAM_KEYS_KEK": kek, "ENGRAM_KEYS_ENCRYPT_LOG": "true"}
    after = None
    if counted is not None:
        port = free_port()
        env["ENGRAM_WORKER_HTTP_PORT"] = str(port)

        async def after() -> None:
            await followed_to_the_end(kafka, db_url)
            counted.update(await worker_counts(port))

    try:
        return await measure_end_to_end(
            {"worker": start_worker(env)}, kafka, db_url, turns, run, sealer=sealer, after=after
        )
    finally:
        await pool.close()


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


async def followed_to_the_end(kafka: KafkaSettings, db_url: str, deadline_s: float = 600) -> None:
    """Wait until the index and the vectors have stored the end of the episodic log."""
    ends = await end_offsets(kafka, kafka.episodes_topic)
    conn = await asyncpg.connect(db_url)
    deadline = time.monotonic() + deadline_s
    try:
        while True:
            rows = await conn.fetch(
                "SELECT projector, partition, next_offset FROM public.projector_offset "
                "WHERE topic = $1 AND (projector = 'messages' OR projector LIKE 'embeddings/%')",
                kafka.episodes_topic,
            )
            stored: dict[str, dict[int, int]] = {}
            for row in rows:
                stored.setdefault(row["projector"], {})[row["partition"]] = row["next_offset"]
            if len(stored) == 2 and all(
                offsets.get(p, 0) >= end
                for offsets in stored.values()
                for p, end in ends.items()
                if end
            ):
                return
            if time.monotonic() > deadline:
                raise RuntimeError("the index and the vectors did not reach the log's end")
            await asyncio.sleep(0.1)
    finally:
        await conn.close()


COUNTERS = {
    "follower_records": 'engram_follower_records_total{follower="messages+embeddings"}',
    "opened_events": 'engram_sealed_opened_total{kind="event"}',
    "opened_claims": 'engram_sealed_opened_total{kind="claims"}',
    "messages_indexed": "engram_messages_indexed_total",
    "messages_embedded": "engram_messages_embedded_total",
}
"""What :func:`worker_counts` reads off the worker's /metrics."""


async def worker_counts(port: int) -> dict[str, float]:
    """The worker's own counters (:data:`COUNTERS`), from its /metrics page."""
    url = f"http://127.0.0.1:{port}/metrics"
    page = await asyncio.to_thread(lambda: urllib.request.urlopen(url, timeout=10).read())
    samples = dict(
        line.rsplit(" ", 1) for line in page.decode().splitlines() if line and line[0] != "#"
    )
    return {name: float(samples.get(sample, "nan")) for name, sample in COUNTERS.items()}


async def encryption_pairs(count: int, pairs: int) -> dict[str, object]:
    """End to end with log encryption off and on, alternated ``pairs`` times in one run, each
    on fresh topics and a fresh database: the ratio on/off is what encryption costs.

    Which of the two goes first alternates too (off, on; on, off; …), so a trend in the
    machine's load over the run — other work starting or ending — does not fall on one side.
    Beside the rates it reports the worker's CPU a turn (user + system, from /proc), which
    other load on a shared machine moves far less than it moves the wall clock: on/off of
    the rate and off/on of the CPU a turn should agree on a quiet machine."""
    settings = load_settings()
    admin_url = settings.database.url.get_secret_value()
    run = "benchenc" + secrets.token_hex(3)
    turns = synthetic_turns(count, tenant=run)
    kek = new_kek_text()
    ratios, plain, sealed, cpu_ratios, plain_cpu, sealed_cpu = [], [], [], [], [], []
    counts: list[dict[str, float]] = []
    for pair in range(pairs):
        kafka_p, db_p = await fresh(settings.kafka, admin_url, f"{run}p{pair}")
        kafka_s, db_s = await fresh(settings.kafka, admin_url, f"{run}s{pair}")

        async def off(kafka: KafkaSettings = kafka_p, db: str = db_p) -> EndToEndRun:
            return await measure_end_to_end(
                {"worker": start_worker(env_for(kafka, db))}, kafka, db, turns, run
            )

        async def on(kafka: KafkaSettings = kafka_s, db: str = db_s) -> EndToEndRun:
            counts.append({})
            return await measure_end_to_end_sealed(kafka, db, turns, run, kek, counts[-1])

        if pair % 2 == 0:
            off_run = await off()
            on_run = await on()
        else:
            on_run = await on()
            off_run = await off()
        plain.append(round(off_run.per_s, 1))
        sealed.append(round(on_run.per_s, 1))
        ratios.append(round(on_run.per_s / off_run.per_s, 3))
        off_cpu, on_cpu = off_run.cpu_us_per_turn["worker"], on_run.cpu_us_per_turn["worker"]
        plain_cpu.append(off_cpu)
        sealed_cpu.append(on_cpu)
        cpu_ratios.append(round(off_cpu / on_cpu, 3))
    return {
        "turns": count,
        "pairs": pairs,
        "end_to_end_plain_per_s": plain,
        "end_to_end_sealed_per_s": sealed,
        "sealed_over_plain": ratios,
        "sealed_over_plain_median": statistics.median(ratios),
        "worker_cpu_us_per_turn_plain": plain_cpu,
        "worker_cpu_us_per_turn_sealed": sealed_cpu,
        # CPU a turn plaintext over sealed: the throughput ratio the worker's CPU alone allows.
        "plain_cpu_over_sealed_cpu": cpu_ratios,
        "plain_cpu_over_sealed_cpu_median": statistics.median(cpu_ratios),
        # The sealed worker's counters, once the index and the vectors reached the log's end,
        # a turn (the warm-up turn counted): records its log follower fetched and decoded,
        # sealed events and claims batches it opened.
        "sealed_worker_counts_per_turn": [
            {name: round(value / (count + 1), 3) for name, value in found.items()}
            for found in counts
        ],
    }


async def embedder_pairs(count: int, pairs: int) -> dict[str, object]:
    """End to end with ``engram worker`` as it runs by default (the vectors on, the local model:
    the contextual default in a child process the worker starts, niced) and with
    ``--no-embedder``, alternated ``pairs`` times in one run, each on fresh
    topics and a fresh database: the ratio is what embedding, sharing the worker's process and
    the machine, costs formation (formation never waits for it, but they share the CPUs). Also,
    when formation has finished, the share of the run's messages that already have a vector (the
    vectors' lag at that moment) and the worker's CPU a turn. The order within a pair
    alternates. With the child: its CPU per vector written when formation had finished
    (``embedder_child_cpu_ms_per_vector_when_formed``: the vectors' CPU per embedded message,
    the model's loading included)."""
    settings = load_settings()
    admin_url = settings.database.url.get_secret_value()
    run = "benchemb" + secrets.token_hex(3)
    turns = synthetic_turns(count, tenant=run)
    messages = sum(len(turn.messages) for turn in turns) + 2  # and the warm-up turn's
    ratios, without, with_follower, embedded_share = [], [], [], []
    indexed_share: list[float] = []
    indexed_share_without: list[float] = []
    cpu_without, cpu_with = [], []

    child_cpu_ms_per_vector: list[float] = []

    async def once(name: str, *args: str) -> tuple[EndToEndRun, int, int]:
        kafka, db = await fresh(settings.kafka, admin_url, name)
        written: dict[str, int] = {}
        worker = start_worker(env_for(kafka, db), *args)

        async def count_written() -> None:
            """What the vectors and the index hold once formation has finished, and the CPU
            the worker's embedder child has used so far (its model's loading included)."""
            child_cpu = sum(cpu_seconds(pid) for pid in embedder_children(worker.pid))
            conn = await asyncpg.connect(db)
            try:
                for table in ("embedding_vector", "message"):
                    written[table] = await conn.fetchval(f"SELECT count(*) FROM {table}")
            finally:
                await conn.close()
            if child_cpu and written["embedding_vector"]:
                child_cpu_ms_per_vector.append(
                    round(1000 * child_cpu / written["embedding_vector"], 1)
                )

        measured = await measure_end_to_end(
            {"worker": worker},
            kafka,
            db,
            turns,
            run,
            after=count_written,
        )
        return measured, written["embedding_vector"], written["message"]

    for pair in range(pairs):
        # Which goes first alternates, so a warming or cooling machine favours neither.
        if pair % 2:
            on, vectors, indexed = await once(f"{run}e{pair}")
            off, _, indexed_off = await once(f"{run}n{pair}", "--no-embedder")
        else:
            off, _, indexed_off = await once(f"{run}n{pair}", "--no-embedder")
            on, vectors, indexed = await once(f"{run}e{pair}")
        without.append(round(off.per_s, 1))
        with_follower.append(round(on.per_s, 1))
        ratios.append(round(on.per_s / off.per_s, 3))
        embedded_share.append(round(vectors / messages, 3))
        indexed_share.append(round(indexed / messages, 3))
        indexed_share_without.append(round(indexed_off / messages, 3))
        cpu_without.append(off.cpu_us_per_turn["worker"])
        cpu_with.append(on.cpu_us_per_turn["worker"])
    return {
        "turns": count,
        "pairs": pairs,
        "embedding_model": settings.embedding.local_model,
        "end_to_end_without_embedder_per_s": without,
        "end_to_end_with_embedder_per_s": with_follower,
        "with_over_without": ratios,
        "with_over_without_median": statistics.median(ratios),
        "worker_cpu_us_per_turn_without": cpu_without,
        "worker_cpu_us_per_turn_with": cpu_with,
        "embedder_child_cpu_ms_per_vector_when_formed": child_cpu_ms_per_vector,
        "messages_embedded_when_formed_share": embedded_share,
        "messages_indexed_when_formed_share": indexed_share,
        "messages_indexed_when_formed_share_without_embedder": indexed_share_without,
    }


if __name__ == "__main__":
    from engram.infra.logs import configure_logging

    configure_logging("warning")
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=5000)
    parser.add_argument(
        "--encryption-pairs",
        type=int,
        default=0,
        help="Only measure end to end with log encryption off and on, alternated this often.",
    )
    parser.add_argument(
        "--embedder-pairs",
        type=int,
        default=0,
        help="Only measure end to end with the worker's embedding follower off and on, "
        "alternated this often.",
    )
    parser.add_argument(
        "--core-only",
        type=int,
        default=0,
        metavar="ROUNDS",
        help="Only the core's core_us_per_turn, in a fresh child process per round (no Kafka "
        "or PostgreSQL), alternated with --baseline-root's code when given.",
    )
    parser.add_argument("--baseline-root", type=Path, help="Another checkout, for --core-only.")
    args = parser.parse_args()
    if args.core_only:
        result = core_rounds(args.turns, args.core_only, args.baseline_root)
    elif args.encryption_pairs:
        result = asyncio.run(encryption_pairs(args.turns, args.encryption_pairs))
    elif args.embedder_pairs:
        result = asyncio.run(embedder_pairs(args.turns, args.embedder_pairs))
    else:
        result = asyncio.run(main(args.turns))
    sys.stdout.write(orjson.dumps(result, option=orjson.OPT_INDENT_2).decode() + "\n")
