"""Soak: a bounded run at a steady offered load, watching memory and lag over time.

Starts `engram worker --no-projector` and `engram projector` on fresh topics and a fresh
database, warms them up with one turn, then appends the latency bench's turns
(bench/latency.py) at ``--rate`` per second for ``--minutes``. Throughout it samples every
process's resident memory (VmRSS from /proc) and the turns appended but not yet readable, and
records each turn's latency from append to readable (its project's formed watermark).

Memory is judged against itself in the same run, not against a figure from another machine:
the baseline is the median RSS of the second quarter of the load (the first quarter is warm-up:
imports, pools, caches, the consumer's first fetches), compared with the median of the last
quarter; the slope (Theil-Sen: the median of pairwise slopes, robust to the step changes of an
allocator) over the second half is reported per minute and per thousand turns.

Prints JSON.

    .venv/bin/python bench/soak.py [--minutes 15] [--rate 50] [--sample-s 5]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import itertools
import secrets
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import asyncpg
import orjson

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from bench.latency import Tracker, follow, latency_turns, offer, summary, warm_up  # noqa: E402
from bench.throughput import env_for, fresh, start_engram, start_worker, stop  # noqa: E402
from engram.infra.settings import load_settings  # noqa: E402
from engram.ingest.producer import EpisodeProducer  # noqa: E402


def rss_mib(pid: int) -> float | None:
    """Resident memory of ``pid`` in MiB (None once it has exited)."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except (FileNotFoundError, ProcessLookupError):
        return None
    for line in status.splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return None


@dataclass
class Samples:
    """RSS of each process and the unformed count, sampled on a fixed period."""

    processes: dict[str, int]
    t_s: list[float] = field(default_factory=list)
    rss: dict[str, list[float]] = field(default_factory=dict)
    unformed: list[int] = field(default_factory=list)

    def take(self, t_s: float, tracker: Tracker) -> None:
        self.t_s.append(round(t_s, 2))
        self.unformed.append(tracker.unformed)
        for name, pid in self.processes.items():
            self.rss.setdefault(name, []).append(round(rss_mib(pid) or 0.0, 2))


async def sample(samples: Samples, tracker: Tracker, period_s: float, done: asyncio.Event) -> None:
    started = time.perf_counter()
    while not done.is_set():
        samples.take(time.perf_counter() - started, tracker)
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(done.wait(), timeout=period_s)


def theil_sen(ts: list[float], ys: list[float]) -> float:
    """The median of the slopes between every pair of samples (units of y per unit of t)."""
    slopes = [
        (y2 - y1) / (t2 - t1)
        for (t1, y1), (t2, y2) in itertools.combinations(zip(ts, ys, strict=True), 2)
        if t2 > t1
    ]
    return statistics.median(slopes) if slopes else 0.0


def growth(ts: list[float], rss: list[float], rate: float) -> dict[str, float]:
    """Late-versus-early memory of one process: the quarter medians, their ratio, the slope."""
    n = len(rss)
    quarter = max(n // 4, 1)
    early = statistics.median(rss[quarter : 2 * quarter] or rss)
    late = statistics.median(rss[n - quarter :])
    half = n // 2
    per_s = theil_sen(ts[half:], rss[half:])
    return {
        "early_median_mib": round(early, 1),
        "late_median_mib": round(late, 1),
        "late_over_early": round(late / early, 3) if early else 0.0,
        "slope_mib_per_min": round(per_s * 60, 3),
        "slope_mib_per_1k_turns": round(per_s * 1000 / rate, 3),
        "max_mib": round(max(rss), 1),
    }


def unformed_percentiles(unformed: list[int]) -> dict[str, int]:
    """Turns appended but not yet readable, over the load window: the lag a reader sees."""
    ordered = sorted(unformed) or [0]

    def pct(p: float) -> int:
        return ordered[min(int(p * len(ordered)), len(ordered) - 1)]

    last = unformed[-1] if unformed else 0
    return {"p50": pct(0.5), "p95": pct(0.95), "p99": pct(0.99), "max": ordered[-1], "last": last}


async def soak(
    minutes: float, rate: float, sample_s: float, drain_s: float = 60.0
) -> dict[str, object]:
    settings = load_settings()
    run = "soak" + secrets.token_hex(3)
    kafka, db_url = await fresh(settings.kafka, settings.database.url.get_secret_value(), run)
    env = env_for(kafka, db_url)
    processes: dict[str, subprocess.Popen[bytes]] = {
        "worker": start_worker(env, "--no-projector"),
        "projector": start_engram(env, "projector"),
    }
    pool = await asyncpg.create_pool(db_url, min_size=1, max_size=4)
    assert pool is not None
    watchers: list[asyncio.Task[None]] = []
    try:
        await warm_up(kafka, pool, run)
        turns = latency_turns(max(int(rate * minutes * 60), 1), run)
        tracker, done, drained = Tracker(), asyncio.Event(), asyncio.Event()
        samples = Samples({name: p.pid for name, p in processes.items()})
        follower = asyncio.create_task(follow(pool, run, tracker, drained))
        sampler = asyncio.create_task(sample(samples, tracker, sample_s, done))
        watchers += [follower, sampler]
        async with EpisodeProducer(kafka) as producer:
            achieved = await offer(producer, turns, rate, tracker)
        done.set()  # memory is judged over the load window, not the drain
        await sampler
        deadline = time.perf_counter() + drain_s
        while tracker.unformed and time.perf_counter() < deadline:
            await asyncio.sleep(0.1)
        drained.set()
        await follower
        exited = {name: p.poll() for name, p in processes.items() if p.poll() is not None}
    finally:
        for watcher in watchers:  # interrupted: they hold pool connections
            watcher.cancel()
        await asyncio.gather(*watchers, return_exceptions=True)
        for process in processes.values():
            stop(process)
        await pool.close()
    latency = summary(rate, achieved, len(turns), tracker, [])
    latency.pop("lag")
    return {
        "minutes": minutes,
        "offered_per_s": rate,
        "sample_s": sample_s,
        "exited": exited,
        "latency": latency,
        "memory": {name: growth(samples.t_s, rss, rate) for name, rss in samples.rss.items()},
        "unformed": unformed_percentiles(samples.unformed),
        "series": {"t_s": samples.t_s, "rss_mib": samples.rss, "unformed": samples.unformed},
    }


if __name__ == "__main__":
    from engram.infra.logs import configure_logging

    configure_logging("warning")
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--minutes", type=float, default=15.0, help="Minutes of steady load.")
    parser.add_argument("--rate", type=float, default=50.0, help="Offered turns per second.")
    parser.add_argument("--sample-s", type=float, default=5.0, help="Seconds between samples.")
    parser.add_argument("--drain-s", type=float, default=60.0, help="Most seconds to drain.")
    args = parser.parse_args()
    result = asyncio.run(soak(args.minutes, args.rate, args.sample_s, args.drain_s))
    sys.stdout.write(orjson.dumps(result, option=orjson.OPT_INDENT_2).decode() + "\n")
