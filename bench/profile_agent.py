"""Where the formation agent's time goes: `engram worker --no-projector` under cProfile.

Publishes N bench turns (the corpus of bench/throughput.py) to fresh topics, runs the formation
worker under cProfile until every claims batch is out, stops it (SIGTERM: faust shuts down and
cProfile writes its file) and prints the functions with the most own and cumulative time, plus
the profile's path for a closer look (``python -m pstats PATH``).

    .venv/bin/python bench/profile_agent.py [--turns 3000] [--top 25]
"""

from __future__ import annotations

import argparse
import asyncio
import io
import pstats
import secrets
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from bench.throughput import count_claims, env_for, fresh, stop, synthetic_turns  # noqa: E402
from engram.infra.settings import load_settings  # noqa: E402
from engram.ingest.producer import EpisodeProducer  # noqa: E402


async def profile(count: int, out: Path) -> float:
    """Seconds between the first and last claims batch while profiled."""
    settings = load_settings()
    run = "prof" + secrets.token_hex(3)
    kafka, db_url = await fresh(settings.kafka, settings.database.url.get_secret_value(), run)
    async with EpisodeProducer(kafka) as producer:
        await producer.publish_many(synthetic_turns(count, tenant=run))
    argv = ["-m", "cProfile", "-o", str(out), "-m", "engram", "worker", "--no-projector"]
    log = (REPO / ".dev" / f"profile-{run}.log").open("wb")
    worker = subprocess.Popen(
        [sys.executable, *argv],
        cwd=REPO,
        env=env_for(kafka, db_url),
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    try:
        return (await count_claims(kafka, count, deadline_s=600)).seconds
    finally:
        stop(worker)


def report(path: Path, top: int) -> str:
    text = io.StringIO()
    stats = pstats.Stats(str(path), stream=text)
    stats.strip_dirs().sort_stats("tottime").print_stats(top)
    stats.sort_stats("cumulative").print_stats(top)
    return text.getvalue()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=3000)
    parser.add_argument("--top", type=int, default=25)
    parser.add_argument("--out", type=Path, default=REPO / ".dev" / "agent.prof")
    args = parser.parse_args()
    seconds = asyncio.run(profile(args.turns, args.out))
    sys.stdout.write(report(args.out, args.top))
    sys.stdout.write(f"\n{args.turns} claims batches in {seconds:.2f}s under the profiler\n")
    sys.stdout.write(f"profile: {args.out}\n")


if __name__ == "__main__":
    main()
