"""Latency under a steady offered load: turn appended → belief readable, and consumer lag.

Starts `engram worker --no-projector` and `engram projector` on fresh topics (one partition)
and a fresh database, then for each offered rate appends bench turns (the corpus of
bench/throughput.py, four projects) on a fixed schedule for a fixed time. A turn counts as
readable once its project's formed watermark (watermarks.backlog.watermark, what the read
API's freshness and wait_for_offset answer from) has reached its offset; latency runs from the
broker's acknowledgement of the append. Every half second it samples the turns appended but
not yet readable and the formation group's lag on the episodic log (end offset minus committed
offset; faust commits every few seconds, so that figure moves in steps).

Each rate is bounded: ``--seconds`` of load, then at most ``--drain-s`` for the rest to form.
Prints JSON: per rate, p50/p95/p99/max in milliseconds, what was achieved, and the lag series.

    .venv/bin/python bench/latency.py [--rates 50,200,800] [--seconds 10] [--drain-s 30]
"""

from __future__ import annotations

import argparse
import asyncio
import secrets
import statistics
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import asyncpg
import orjson
from aiokafka import AIOKafkaConsumer, TopicPartition
from aiokafka.admin import AIOKafkaAdminClient

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from bench.throughput import (  # noqa: E402
    env_for,
    fresh,
    start_engram,
    start_worker,
    stop,
    synthetic_turns,
)
from engram.infra.settings import KafkaSettings, load_settings  # noqa: E402
from engram.ingest.producer import EpisodeProducer  # noqa: E402
from engram.schemas.episodes import TurnAppended  # noqa: E402
from engram.watermarks.backlog import watermark  # noqa: E402

PROJECTS = 4
POLL_S = 0.025  # each poll is one watermark query per waiting project: keep the bench light
SAMPLE_S = 0.5


@dataclass
class Tracker:
    """Appended turns waiting to become readable, per project, and the latencies seen."""

    waiting: dict[str, list[tuple[int, float]]] = field(default_factory=dict)
    latencies: list[float] = field(default_factory=list)
    appended: int = 0

    def add(self, project: str, offset: int, at: float) -> None:
        self.waiting.setdefault(project, []).append((offset, at))
        self.appended += 1

    def formed(self, project: str, formed_offset: int | None, now: float) -> None:
        if formed_offset is None:
            return
        left = []
        for offset, at in self.waiting.get(project, []):
            if offset <= formed_offset:
                self.latencies.append(now - at)
            else:
                left.append((offset, at))
        self.waiting[project] = left

    @property
    def unformed(self) -> int:
        return sum(len(w) for w in self.waiting.values())


def latency_turns(count: int, tenant: str) -> list[TurnAppended]:
    return [
        t.model_copy(update={"project": f"p{i % PROJECTS}"})
        for i, t in enumerate(synthetic_turns(count, tenant=tenant))
    ]


async def offer(
    producer: EpisodeProducer, turns: list[TurnAppended], rate: float, tracker: Tracker
) -> float:
    """Append ``turns`` at ``rate`` per second on a fixed schedule; the achieved rate."""

    async def append(turn: TurnAppended) -> None:
        appended = await producer.publish(turn)
        tracker.add(turn.project, appended.offset, time.perf_counter())

    started = time.perf_counter()
    tasks = []
    for i, turn in enumerate(turns):
        delay = started + i / rate - time.perf_counter()
        if delay > 0:
            await asyncio.sleep(delay)
        tasks.append(asyncio.create_task(append(turn)))
    await asyncio.gather(*tasks)
    return len(turns) / (time.perf_counter() - started)


async def follow(pool: asyncpg.Pool, tenant: str, tracker: Tracker, done: asyncio.Event) -> None:
    """Poll each waiting project's formed watermark until told to stop."""
    while not done.is_set():
        for project in [p for p, w in tracker.waiting.items() if w]:
            mark = await watermark(pool, tenant=tenant, project=project)
            tracker.formed(project, mark.formed_offset, time.perf_counter())
        await asyncio.sleep(POLL_S)


async def group_lag(
    admin: AIOKafkaAdminClient, ends: AIOKafkaConsumer, kafka: KafkaSettings
) -> int:
    tp = TopicPartition(kafka.episodes_topic, 0)
    committed = await admin.list_consumer_group_offsets(kafka.group_id, partitions=[tp])
    end = (await ends.end_offsets([tp]))[tp]
    meta = committed.get(tp)
    done: int = meta.offset if meta is not None and meta.offset >= 0 else 0
    last: int = end  # aiokafka ships no types
    return last - done


async def sample_lag(
    kafka: KafkaSettings, tracker: Tracker, done: asyncio.Event, started: float
) -> list[dict[str, float]]:
    admin = AIOKafkaAdminClient(bootstrap_servers=kafka.bootstrap)
    ends = AIOKafkaConsumer(bootstrap_servers=kafka.bootstrap, group_id=None)
    await admin.start()
    await ends.start()
    samples = []
    try:
        while not done.is_set():
            samples.append(
                {
                    "t_s": round(time.perf_counter() - started, 2),
                    "unformed": tracker.unformed,
                    "group_lag": await group_lag(admin, ends, kafka),
                }
            )
            await asyncio.sleep(SAMPLE_S)
    finally:
        await ends.stop()
        await admin.close()
    return samples


async def measure_rate(
    kafka: KafkaSettings, pool: asyncpg.Pool, rate: float, seconds: float, drain_s: float, run: str
) -> dict[str, object]:
    tenant = f"{run}r{int(rate)}"
    turns = latency_turns(max(int(rate * seconds), 1), tenant)
    tracker, done = Tracker(), asyncio.Event()
    started = time.perf_counter()
    follower = asyncio.create_task(follow(pool, tenant, tracker, done))
    sampler = asyncio.create_task(sample_lag(kafka, tracker, done, started))
    async with EpisodeProducer(kafka) as producer:
        achieved = await offer(producer, turns, rate, tracker)
    deadline = time.perf_counter() + drain_s
    while tracker.unformed and time.perf_counter() < deadline:
        await asyncio.sleep(SAMPLE_S / 5)
    done.set()
    await follower
    lag = await sampler
    return summary(rate, achieved, len(turns), tracker, lag)


def summary(
    rate: float, achieved: float, count: int, tracker: Tracker, lag: list[dict[str, float]]
) -> dict[str, object]:
    ms = sorted(1000 * s for s in tracker.latencies)

    def pct(p: float) -> float | None:
        return round(ms[min(int(p * len(ms)), len(ms) - 1)], 1) if ms else None

    return {
        "offered_per_s": rate,
        "appended_per_s": round(achieved, 1),
        "turns": count,
        "readable": len(ms),
        "unformed_at_deadline": tracker.unformed,
        "p50_ms": pct(0.50),
        "p95_ms": pct(0.95),
        "p99_ms": pct(0.99),
        "max_ms": round(ms[-1], 1) if ms else None,
        "mean_ms": round(statistics.fmean(ms), 1) if ms else None,
        "max_unformed": max((s["unformed"] for s in lag), default=0),
        "max_group_lag": max((s["group_lag"] for s in lag), default=0),
        "lag": lag,
    }


async def warm_up(kafka: KafkaSettings, pool: asyncpg.Pool, run: str) -> None:
    """One turn all the way through, so group joins and first connections are not measured."""
    tracker = Tracker()
    turn = latency_turns(1, run + "warm")[0]
    async with EpisodeProducer(kafka) as producer:
        appended = await producer.publish(turn)
    tracker.add(turn.project, appended.offset, time.perf_counter())
    deadline = time.perf_counter() + 120
    while tracker.unformed:
        if time.perf_counter() > deadline:
            raise RuntimeError("the warm-up turn did not form within 120 s")
        mark = await watermark(pool, tenant=turn.tenant, project=turn.project)
        tracker.formed(turn.project, mark.formed_offset, time.perf_counter())
        await asyncio.sleep(0.05)


async def main(rates: list[float], seconds: float, drain_s: float) -> dict[str, object]:
    settings = load_settings()
    run = "lat" + secrets.token_hex(3)
    kafka, db_url = await fresh(settings.kafka, settings.database.url.get_secret_value(), run)
    env = env_for(kafka, db_url)
    processes = [start_worker(env, "--no-projector"), start_engram(env, "projector")]
    pool = await asyncpg.create_pool(db_url, min_size=1, max_size=4)
    try:
        await warm_up(kafka, pool, run)
        results = [await measure_rate(kafka, pool, r, seconds, drain_s, run) for r in rates]
    finally:
        await pool.close()
        for process in processes:
            stop(process)
    return {"seconds_per_rate": seconds, "poll_ms": POLL_S * 1000, "rates": results}


if __name__ == "__main__":
    from engram.infra.logs import configure_logging

    configure_logging("warning")
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rates", default="50,200,800", help="Offered turns/s, comma-separated.")
    parser.add_argument("--seconds", type=float, default=10.0, help="Seconds of load per rate.")
    parser.add_argument("--drain-s", type=float, default=30.0, help="Most seconds to drain.")
    args = parser.parse_args()
    rates = [float(r) for r in args.rates.split(",")]
    result = asyncio.run(main(rates, args.seconds, args.drain_s))
    sys.stdout.write(orjson.dumps(result, option=orjson.OPT_INDENT_2).decode() + "\n")
