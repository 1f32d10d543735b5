"""Scale-out: end-to-end throughput with one formation worker and one projector, then with two
of each, on six partitions, against a raw baseline measured in the same run.

Each configuration gets fresh topics (six partitions) and a fresh database. Every process serves
/ready on a port of its own; the turns are appended only once all of them are ready (partitions
assigned), so with two of each both members of each group take part. End to end runs from the
first append until every turn's consolidation run is committed. Prints JSON with the rates, the
ratio of two to one, and each to raw.

    .venv/bin/python bench/scale_out.py [--turns 3000]
"""

from __future__ import annotations

import argparse
import asyncio
import secrets
import subprocess
import sys
import time
from pathlib import Path

import orjson

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from bench.throughput import (  # noqa: E402
    env_for,
    fresh,
    measure_raw,
    start_engram,
    stop,
    synthetic_turns,
    wait_runs,
)
from engram.infra.settings import KafkaSettings, load_settings  # noqa: E402
from engram.ingest.producer import EpisodeProducer  # noqa: E402
from engram.schemas.episodes import TurnAppended  # noqa: E402
from tests.support.http import first_ok, free_port  # noqa: E402

PARTITIONS = 6


def start_pairs(
    kafka: KafkaSettings, db_url: str, pairs: int
) -> list[tuple[subprocess.Popen[bytes], int]]:
    """``pairs`` times a formation-only worker and a projector, each with a health port of its own."""
    started = []
    for _ in range(pairs):
        for argv in (("worker", "--no-projector"), ("projector",)):
            port = free_port()
            env = env_for(kafka, db_url) | {"ENGRAM_WORKER_HTTP_PORT": str(port)}
            started.append((start_engram(env, *argv), port))
    return started


async def end_to_end(admin_url: str, turns: list[TurnAppended], run: str, pairs: int) -> float:
    settings = load_settings()
    kafka, db_url = await fresh(settings.kafka, admin_url, f"{run}x{pairs}", partitions=PARTITIONS)
    processes = start_pairs(kafka, db_url, pairs)
    try:
        for _, port in processes:
            await first_ok(f"http://127.0.0.1:{port}/ready", deadline_s=120)
        started = time.perf_counter()
        async with EpisodeProducer(kafka) as producer:
            await producer.publish_many(turns)
        await wait_runs(db_url, len(turns), deadline_s=900)
        return len(turns) / (time.perf_counter() - started)
    finally:
        for process, _ in processes:
            stop(process)


async def main(count: int) -> dict[str, object]:
    settings = load_settings()
    admin_url = settings.database.url.get_secret_value()
    run = "scale" + secrets.token_hex(3)
    turns = synthetic_turns(count, tenant=run)
    kafka_raw, db_raw = await fresh(settings.kafka, admin_url, run + "raw", partitions=PARTITIONS)
    async with EpisodeProducer(kafka_raw) as producer:
        await producer.publish_many(turns)
    raw = await measure_raw(kafka_raw, db_raw, count)
    one = await end_to_end(admin_url, turns, run, pairs=1)
    two = await end_to_end(admin_url, turns, run, pairs=2)
    return {
        "turns": count,
        "partitions": PARTITIONS,
        "raw_aiokafka_copy_per_s": round(raw, 1),
        "one_worker_one_projector_per_s": round(one, 1),
        "two_workers_two_projectors_per_s": round(two, 1),
        "two_over_one": round(two / one, 2),
        "one_over_raw": round(one / raw, 4),
        "two_over_raw": round(two / raw, 4),
    }


if __name__ == "__main__":
    from engram.infra.logs import configure_logging

    configure_logging("warning")
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=3000)
    result = asyncio.run(main(parser.parse_args().turns))
    sys.stdout.write(orjson.dumps(result, option=orjson.OPT_INDENT_2).decode() + "\n")
