"""No head-of-line blocking: a slow model on one project does not stall the others.

A local OpenAI-compatible server answers every request after 500 ms. 64 active projects share
one partition; each turn is one message, so one model call. Formed one at a time that is
2 turns/s. The same run also measures the worker held to one episode in flight (the
sequential baseline), then the worker as configured. Prints JSON with both rates and ratios.

    .venv/bin/python bench/slow_model.py [--projects 64] [--turns-per-project 5]
"""

from __future__ import annotations

import argparse
import asyncio
import secrets
import sys
import time
from pathlib import Path

import asyncpg
import orjson

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from bench.throughput import env_for, fresh, start_worker, stop  # noqa: E402
from engram.infra.settings import load_settings  # noqa: E402
from engram.ingest.producer import EpisodeProducer  # noqa: E402
from engram.schemas.episodes import TurnAppended  # noqa: E402
from tests.fakes.model_scripts import echo_model  # noqa: E402
from tests.fakes.openai_server import FakeOpenAIServer  # noqa: E402
from tests.support.episodes import turn  # noqa: E402
from tests.support.model_env import model_worker_env  # noqa: E402

LATENCY_S = 0.5
CITIES = ["Lisbon", "Porto", "Cork", "Oslo", "Riga", "Turin", "Quito", "Bergen"]


def turns_for(tenant: str, projects: int, per_project: int) -> list[TurnAppended]:
    return [
        turn(
            tenant,
            f"user{p}",
            f"project{p}",
            f"I live in {CITIES[(p + i) % len(CITIES)]}.",
            seq=i * projects + p,
        )
        for i in range(per_project)
        for p in range(projects)
    ]


async def formed_runs(db_url: str) -> int:
    conn = await asyncpg.connect(db_url)
    try:
        return int(await conn.fetchval("SELECT count(*) FROM consolidation_run"))
    finally:
        await conn.close()


async def run_once(
    server: FakeOpenAIServer, name: str, turns: list[TurnAppended], max_in_flight: int
) -> float:
    """Turns per second from first publish until every turn's beliefs are committed."""
    settings = load_settings()
    kafka, db_url = await fresh(settings.kafka, settings.database.url.get_secret_value(), name)
    env = model_worker_env(env_for(kafka, db_url), server, max_in_flight=str(max_in_flight))
    worker = start_worker(env)
    try:
        async with EpisodeProducer(kafka) as producer:
            warmup = turns_for(name + "warm", 1, 1)
            await producer.publish_many(warmup)
            deadline = time.monotonic() + 120
            while await formed_runs(db_url) < 1:
                if time.monotonic() > deadline:
                    raise RuntimeError("the worker did not start forming")
                await asyncio.sleep(0.05)
            started = time.perf_counter()
            await producer.publish_many(turns)
        deadline = time.monotonic() + 600
        while await formed_runs(db_url) < len(turns) + 1:
            if time.monotonic() > deadline:
                raise RuntimeError("formation did not finish")
            await asyncio.sleep(0.05)
        return len(turns) / (time.perf_counter() - started)
    finally:
        stop(worker)


async def main(projects: int, per_project: int) -> dict[str, object]:
    run = "slow" + secrets.token_hex(3)
    async with FakeOpenAIServer(echo_model(delay=lambda _: LATENCY_S)) as server:
        sequential = await run_once(server, run + "s", turns_for(run, 8, 1), max_in_flight=1)
        concurrent_turns = turns_for(run, projects, per_project)
        concurrent = await run_once(server, run + "c", concurrent_turns, max_in_flight=1000)
        peak = server.max_in_flight
    return {
        "model_latency_s": LATENCY_S,
        "projects": projects,
        "turns": len(concurrent_turns),
        "nominal_sequential_per_s": 1 / LATENCY_S,
        "measured_sequential_per_s": round(sequential, 2),
        "concurrent_per_s": round(concurrent, 2),
        "ratio_to_nominal_sequential": round(concurrent * LATENCY_S, 1),
        "ratio_to_measured_sequential": round(concurrent / sequential, 1),
        "peak_concurrent_model_calls": peak,
    }


if __name__ == "__main__":
    from engram.infra.logs import configure_logging

    configure_logging("warning")
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--projects", type=int, default=64)
    parser.add_argument("--turns-per-project", type=int, default=5)
    args = parser.parse_args()
    result = asyncio.run(main(args.projects, args.turns_per_project))
    sys.stdout.write(orjson.dumps(result, option=orjson.OPT_INDENT_2).decode() + "\n")
