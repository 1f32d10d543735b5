"""The formation framework alone and faust's floor, without the rest of bench/throughput.py,
from this checkout or another one — so that two versions can be measured interleaved in one
session on a noisy machine (before, after, before, after …) and compared as distributions.

Each run publishes the bench turns to fresh topics and runs the checkout's
``bench/framework_worker.py`` (the worker around precomputed core answers) and
``bench/faust_floor.py`` (read, send on, ack) exactly as bench/throughput.py does
(``measure_script``), and prints their CPU and wall time per turn as JSON lines.

    .venv/bin/python bench/framework_pair.py --turns 3000 --runs 3 \\
        [--checkout PATH_A --checkout PATH_B]   (default: this checkout)
"""

from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path

import orjson

REPO = Path(__file__).resolve().parent.parent

MEASURE = """
import asyncio, secrets, sys
import orjson
sys.path.insert(0, sys.argv[1])
import bench.throughput as bench
from engram.infra.logs import configure_logging
from engram.infra.settings import load_settings

async def main(count: int) -> dict[str, float]:
    settings = load_settings()
    admin = settings.database.url.get_secret_value()
    run = "fwpair" + secrets.token_hex(3)
    turns = bench.synthetic_turns(count, tenant=run)
    framework = await bench.measure_script(
        settings.kafka, admin, turns, run + "f", "framework_worker.py", run, str(count)
    )
    floor = await bench.measure_script(settings.kafka, admin, turns, run + "g", "faust_floor.py")
    return {
        "framework_only_cpu_us_per_turn": round(1e6 * framework.cpu_per_turn, 1),
        "framework_only_us_per_turn": round(1e6 * framework.seconds / count, 1),
        "faust_floor_cpu_us_per_turn": round(1e6 * floor.cpu_per_turn, 1),
        "faust_floor_us_per_turn": round(1e6 * floor.seconds / count, 1),
    }

configure_logging("warning")
sys.stdout.write(orjson.dumps(asyncio.run(main(int(sys.argv[2])))).decode() + "\\n")
"""


def measure(checkout: Path, turns: int) -> dict[str, object]:
    """One run of one checkout, in a process of its own that imports that checkout's code."""
    done = subprocess.run(
        [sys.executable, "-c", MEASURE, str(checkout), str(turns)],
        cwd=checkout,
        capture_output=True,
        check=True,
    )
    return {"checkout": str(checkout), **orjson.loads(done.stdout.splitlines()[-1])}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=3000)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--checkout", type=Path, action="append")
    args = parser.parse_args()
    checkouts = [path.resolve() for path in args.checkout or [REPO]]
    for run in range(args.runs):
        for checkout in checkouts:
            result = {"run": run + 1, **measure(checkout, args.turns)}
            sys.stdout.write(orjson.dumps(result).decode() + "\n")
            sys.stdout.flush()


if __name__ == "__main__":
    main()
