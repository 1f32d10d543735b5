"""The formation agent and the projector of two checkouts over the same input: deterministic
profiles (what each does a turn and a batch) and their CPU, alternated before/after.

Rates measured on a loaded machine move with the load, and a profile's times with them; what a
checkout *does* per turn does not. Each run takes one checkout (``--before``, ``--after``),
publishes the bench turns of its ``bench/throughput.py`` to fresh topics, runs its ``engram
worker --no-projector`` until every claims batch is out, then its belief projector in process
over those batches, exactly as ``bench/throughput.py`` measures them (``count_claims``,
``measure_projector``). A profiled run (the first ``--profiled`` pairs) wraps the worker and the
projector in ``cProfile`` timed by process CPU (``time.process_time``: time another process
takes is not counted), and reports calls and own CPU per turn (agent) and per batch (projector),
by function and by package, and how much of a CPU difference the unchanged code shows too (the
machine's share); the timed runs (``--pairs``, unprofiled, ABAB…) report the agent's turns/s and
CPU µs a turn (between its first and last batch) and the projector's steady batches/s and CPU µs
a batch, with each pair's after/before ratio, their median and spread.

    .venv/bin/python bench/profile_pair.py --before PATH --after PATH [--turns 2000]
        [--profiled 1] [--pairs 3] [--top 25] [--keep DIR]

Each checkout runs with its own code (``PYTHONPATH`` and the working directory point at it)
under this environment's interpreter and packages, so only the code differs.
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import importlib
import json
import os
import pstats
import runpy
import secrets
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

import asyncpg
from aiokafka import AIOKafkaConsumer

THIS = Path(__file__).resolve()


START, STOP = signal.SIGRTMIN, signal.SIGRTMIN + 1
"""What the profiled worker is told when the first claims batch is out, and after the last:
the profile covers the steady stretch, not start-up (imports, group join, compiled patterns).
Real-time signals, because faust's worker handles SIGTERM, SIGINT and SIGUSR1 itself."""


def run_profiled_worker(out: Path) -> None:
    """``engram worker --no-projector`` of the checkout on ``sys.path``, profiled (CPU-timed)
    from :data:`START` to :data:`STOP`, when the stats are written to ``out``."""
    profiler = cProfile.Profile(time.process_time)

    def stop(*_: object) -> None:
        profiler.disable()
        profiler.dump_stats(out)

    signal.signal(START, lambda *_: profiler.enable())
    signal.signal(STOP, stop)
    sys.argv = ["engram", "worker", "--no-projector"]
    runpy.run_module("engram", run_name="__main__", alter_sys=True)


async def measure_checkout(tree: Path, turns: int, profile_dir: Path | None) -> dict[str, Any]:
    """One run of the checkout ``tree`` (imported by the caller's ``sys.path``)."""
    # The checkout's own bench module: its imports (engram.shared.* or infra.*) are its own.
    bench: Any = importlib.import_module("bench.throughput")
    settings = bench.load_settings()
    admin_url = settings.database.url.get_secret_value()
    name = "prof" + secrets.token_hex(3)
    kafka, db_url = await bench.fresh(settings.kafka, admin_url, name)
    try:
        async with bench.EpisodeProducer(kafka) as producer:
            await producer.publish_many(bench.synthetic_turns(turns, tenant=name))
        agent = await _agent(bench, tree, kafka, db_url, turns, profile_dir)
        projector = await _projector(bench, kafka, db_url, turns, profile_dir)
    finally:
        await _drop_database(admin_url, name)
    return {"tree": str(tree), **agent, **projector}


async def _agent(
    bench: Any, tree: Path, kafka: Any, db_url: str, turns: int, profile_dir: Path | None
) -> dict[str, Any]:
    if profile_dir is None:
        argv = [sys.executable, "-m", "engram", "worker", "--no-projector"]
    else:
        argv = [sys.executable, str(THIS), "worker", str(profile_dir / "agent.prof")]
    env = bench.env_for(kafka, db_url) | {"PYTHONPATH": str(tree)}
    with tempfile.TemporaryFile() as log:
        worker = subprocess.Popen(argv, cwd=tree, env=env, stdout=log, stderr=subprocess.STDOUT)
        try:
            if profile_dir is not None:
                await _profile_steady(kafka, turns, worker.pid, profile_dir / "agent.prof")
                return {}
            seen = await bench.count_claims(kafka, turns, deadline_s=900, pid=worker.pid)
        finally:
            bench.stop(worker)
    return {
        "agent_per_s": round(turns / seen.seconds, 1),
        "agent_cpu_us_per_turn": round(1e6 * seen.cpu_per_turn, 1),
    }


async def _profile_steady(kafka: Any, want: int, pid: int, out: Path) -> None:
    """Signal the profiled worker :data:`START` once its first claims batch is out and
    :data:`STOP` once all ``want`` are, then wait for its profile."""
    consumer = AIOKafkaConsumer(
        kafka.claims_topic,
        bootstrap_servers=kafka.bootstrap,
        auto_offset_reset="earliest",
        group_id=None,
    )
    await consumer.start()
    seen = 0
    deadline = time.monotonic() + 900
    try:
        while seen < want and time.monotonic() < deadline:
            found = sum(len(r) for r in (await consumer.getmany(timeout_ms=200)).values())
            if found and not seen:
                os.kill(pid, START)
            seen += found
    finally:
        await consumer.stop()
    os.kill(pid, STOP)
    while not out.exists() and time.monotonic() < deadline:
        await asyncio.sleep(0.1)  # the worker writes the file on STOP: poll it with a deadline
    if not out.exists():
        raise RuntimeError(f"{seen} of {want} claims batches; no profile written")


async def _projector(
    bench: Any, kafka: Any, db_url: str, turns: int, profile_dir: Path | None
) -> dict[str, Any]:
    profiler = cProfile.Profile(time.process_time) if profile_dir else None
    if profiler is not None:
        profiler.enable()
    try:
        run = await bench.measure_projector(kafka, db_url, turns)
    finally:
        if profiler is not None and profile_dir is not None:
            profiler.disable()
            profiler.dump_stats(profile_dir / "projector.prof")
    return {
        "projector_steady_per_s": round(run.steady_per_s, 1),
        "projector_cpu_us_per_batch": round(run.cpu_us_per_batch, 1),
    }


async def _drop_database(admin_url: str, name: str) -> None:
    conn = await asyncpg.connect(admin_url)
    try:
        await conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
    finally:
        await conn.close()


def _where(path: str, tree: str) -> str:
    """A function's file, comparable across checkouts: relative to its checkout, or to
    site-packages, or the standard library's module name."""
    if "site-packages/" in path:  # first: a checkout may hold the environment (.venv)
        return path.split("site-packages/", 1)[1]
    if path.startswith(tree):
        return path[len(tree) :].lstrip("/")
    return Path(path).name


UNITS = {
    "agent": "engram/streams/formation_stage.py:form",
    "projector": "engram/schemas/claims.py:decode_claims_batch",
}
"""A function called once a turn (the agent forms each episode once) and once a batch (the
projector decodes each claims batch once) in both checkouts: the profiles are read per call
of it, so a profile's stretch need not match a count of turns exactly."""


def _package(key: str) -> str:
    """A function's package: ``engram/<package>`` for the checkout's (one import name),
    else the first part of its path."""
    parts = key.split(":")[0].split("/")
    return "/".join(parts[:2]) if parts[0] == "engram" and len(parts) > 2 else parts[0]


def summarise(prof: Path, tree: str, unit: str, top: int) -> dict[str, Any]:
    """Calls and own CPU µs per call of ``unit``: in all, by package, by function."""
    raw: dict[tuple[str, int, str], tuple[Any, ...]] = pstats.Stats(str(prof)).stats  # type: ignore[attr-defined]
    totals: dict[str, list[float]] = defaultdict(lambda: [0.0, 0.0])
    for (path, _line, name), (_cc, calls, own, *_rest) in raw.items():
        totals[f"{_where(path, tree)}:{name}"][0] += calls
        totals[f"{_where(path, tree)}:{name}"][1] += own
    per = totals[unit][0]
    if not per:
        raise RuntimeError(f"{prof}: {unit} was never called")
    functions = {k: [c / per, 1e6 * t / per] for k, (c, t) in totals.items()}
    packages: dict[str, list[float]] = defaultdict(lambda: [0.0, 0.0])
    for key, (calls, own) in functions.items():
        packages[_package(key)][0] += calls
        packages[_package(key)][1] += own
    return {
        "units": int(per),
        "calls": round(sum(c for c, _ in functions.values()), 1),
        "cpu_us": round(sum(t for _, t in functions.values()), 1),
        "packages": {k: [round(c, 1), round(t, 1)] for k, (c, t) in _ranked(packages, top)},
        "functions": {k: [round(c, 2), round(t, 1)] for k, (c, t) in _ranked(functions, top)},
        "_all": functions,
    }


def _ranked(table: dict[str, list[float]], top: int) -> list[tuple[str, list[float]]]:
    return sorted(table.items(), key=lambda kv: -kv[1][1])[:top]


def differences(before: dict[str, Any], after: dict[str, Any], top: int) -> dict[str, Any]:
    """The functions whose calls or own CPU a unit changed most, after minus before."""
    keys = set(before["_all"]) | set(after["_all"])
    rows = []
    for key in keys:
        b, a = before["_all"].get(key, [0.0, 0.0]), after["_all"].get(key, [0.0, 0.0])
        rows.append((key, round(a[0] - b[0], 2), round(a[1] - b[1], 1), round(b[1], 1)))
    by_cpu = sorted(rows, key=lambda r: -abs(r[2]))[:top]
    by_calls = sorted(rows, key=lambda r: -abs(r[1]))[:top]
    return {
        "calls_delta": round(after["calls"] - before["calls"], 1),
        "cpu_us_delta": round(after["cpu_us"] - before["cpu_us"], 1),
        "by_cpu [key, calls, cpu_us, cpu_us_before]": by_cpu,
        "by_calls [key, calls, cpu_us, cpu_us_before]": by_calls,
    }


def _one(tree: Path, turns: int, profile_dir: Path | None) -> dict[str, Any]:
    """A run of ``tree`` in a child process, so that each checkout imports only its own code."""
    argv = [sys.executable, str(THIS), "one", str(tree), str(turns)]
    if profile_dir is not None:
        argv.append(str(profile_dir))
    done = subprocess.run(
        argv, cwd=tree, env={**os.environ, "PYTHONPATH": str(tree)}, capture_output=True
    )
    if done.returncode != 0:
        raise RuntimeError(f"{tree}: {done.stderr.decode()[-3000:]}")
    last: dict[str, Any] = json.loads(done.stdout.decode().strip().splitlines()[-1])
    return last


def _spread(values: list[float]) -> dict[str, float]:
    return {
        "median": round(statistics.median(values), 3),
        "min": round(min(values), 3),
        "max": round(max(values), 3),
    }


MEASURES = (
    "agent_per_s",
    "agent_cpu_us_per_turn",
    "projector_steady_per_s",
    "projector_cpu_us_per_batch",
)


def compare(
    before: Path, after: Path, turns: int, *, profiled: int, pairs: int, top: int, keep: Path
) -> dict[str, Any]:
    """``profiled`` profiled pairs, then ``pairs`` timed pairs, before and after alternated;
    the profiles stay in ``keep`` (``python -m pstats`` reads them)."""
    trees = {"before": before, "after": after}
    profiles: list[dict[str, dict[str, Any]]] = []
    for n in range(profiled):
        pair: dict[str, dict[str, Any]] = {}
        for label, tree in trees.items():
            directory = keep / f"{label}{n}"
            directory.mkdir(parents=True, exist_ok=True)
            _one(tree, turns, directory)
            pair[label] = {
                stage: summarise(directory / f"{stage}.prof", str(tree), unit, top)
                for stage, unit in UNITS.items()
            }
        profiles.append(pair)
    runs: dict[str, list[dict[str, Any]]] = {"before": [], "after": []}
    for _ in range(pairs):
        for label, tree in trees.items():
            runs[label].append(_one(tree, turns, None))
    ratios = {
        m: _spread([a[m] / b[m] for b, a in zip(runs["before"], runs["after"], strict=True)])
        for m in MEASURES
    }
    return {
        "turns": turns,
        "before": str(before),
        "after": str(after),
        "timed": {
            label: {m: [r[m] for r in found] for m in MEASURES} for label, found in runs.items()
        },
        "after_over_before": ratios,
        "profiled_pairs": [
            {stage: _pair_totals(pair, stage, before, after) for stage in UNITS}
            for pair in profiles
        ],
        "first_profiled_pair": {
            stage: {
                "before": _shown(profiles[0]["before"][stage]),
                "after": _shown(profiles[0]["after"][stage]),
                "after_minus_before": differences(
                    profiles[0]["before"][stage], profiles[0]["after"][stage], top
                ),
            }
            for stage in UNITS
        }
        if profiles
        else {},
    }


def _pair_totals(
    pair: dict[str, dict[str, Any]], stage: str, before: Path, after: Path
) -> dict[str, Any]:
    """Calls and own CPU a unit, before and after; and the CPU of the functions whose file is
    byte for byte the same in both checkouts: if that code's CPU moves as much as the total,
    the difference is the machine's, not the code's (``code_cpu_ratio``, the total's ratio over
    that one, is then 1)."""
    b, a = pair["before"][stage], pair["after"][stage]
    same = [k for k in set(b["_all"]) & set(a["_all"]) if _same_file(k, before, after)]
    same_b = sum(b["_all"][k][1] for k in same)
    same_a = sum(a["_all"][k][1] for k in same)
    return {
        "calls": [b["calls"], a["calls"]],
        "cpu_us": [b["cpu_us"], a["cpu_us"]],
        "cpu_ratio": round(a["cpu_us"] / b["cpu_us"], 3),
        "same_code_cpu_us": [round(same_b, 1), round(same_a, 1)],
        "same_code_cpu_ratio": round(same_a / same_b, 3),
        # The machine's share taken out: what the code itself adds to a unit's CPU.
        "code_cpu_ratio": round((a["cpu_us"] / b["cpu_us"]) / (same_a / same_b), 3),
    }


def _same_file(key: str, before: Path, after: Path) -> bool:
    """Whether ``key``'s file is the same bytes in both checkouts (outside them: the same
    environment, so the same file)."""
    path = key.rpartition(":")[0]
    old, new = before / path, after / path
    if not old.is_file() or not new.is_file():
        return not path.startswith(TREE_PACKAGES)
    return old.read_bytes() == new.read_bytes()


TREE_PACKAGES = (
    "engram",
    "formation",
    "resolution",
    "streams",
    "projections",
    "ingest",
    "schemas",
    "infra",
    "watermarks",
    "generations",
    "policies",
    "bench",
)
"""The checkouts' own packages: a function of one that is missing from the other moved or is
new, so its code is not the same."""


def _shown(summary: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in summary.items() if k != "_all"}


def main() -> None:
    # This file's folder holds scripts named like modules (search, projector …): keep it off
    # the path, so that the checkout's imports find only the checkout and the packages.
    sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != THIS.parent]
    if len(sys.argv) > 1 and sys.argv[1] == "worker":
        run_profiled_worker(Path(sys.argv[2]))
        return
    if len(sys.argv) > 1 and sys.argv[1] == "one":
        tree, turns = Path(sys.argv[2]), int(sys.argv[3])
        profile_dir = Path(sys.argv[4]) if len(sys.argv) > 4 else None
        sys.path.insert(0, str(tree))
        result = asyncio.run(measure_checkout(tree, turns, profile_dir))
        sys.stdout.write(json.dumps(result) + "\n")
        return
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", type=Path, required=True)
    parser.add_argument("--after", type=Path, required=True)
    parser.add_argument("--turns", type=int, default=2000)
    parser.add_argument("--pairs", type=int, default=3)
    parser.add_argument("--profiled", type=int, default=1, help="profiled pairs, first")
    parser.add_argument("--top", type=int, default=25)
    parser.add_argument("--keep", type=Path, default=Path(tempfile.gettempdir()) / "profile_pair")
    args = parser.parse_args()
    result = compare(
        args.before.resolve(),
        args.after.resolve(),
        args.turns,
        profiled=args.profiled,
        pairs=args.pairs,
        top=args.top,
        keep=args.keep,
    )
    sys.stdout.write(json.dumps(result, indent=1) + "\n")


if __name__ == "__main__":
    main()
