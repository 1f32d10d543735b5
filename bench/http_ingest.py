"""HTTP ingest latency: ``POST /v1/turns`` through the Python client against a real
``engram api`` process, on fresh topics and a fresh database (the shared one is not touched).

Measures, one request at a time (what one agent runtime sees):
  single  — one turn per request: p50/p99 latency and turns/s;
  batch   — ``--batch`` turns per request: p50/p99 latency and turns/s;
  refused — a Kafka that is not there: how long the 503 takes.
Prints JSON.

    .venv/bin/python bench/http_ingest.py [--requests 500] [--batch 100]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import secrets
import signal
import socket
import statistics
import subprocess
import sys
import time
import uuid
from datetime import UTC, datetime
from pathlib import Path

import asyncpg
import httpx

from engram.client import AsyncEngram, EngramError
from engram.infra.settings import KafkaSettings, KeysSettings, load_settings, subprocess_env
from engram.projections.migrate import migrate
from engram.schemas.common import Role
from engram.schemas.episodes import Message, TurnAppended
from engram.service.tokens import create_token

REPO = Path(__file__).resolve().parents[1]
CLEAR = KeysSettings(kek=None, kek_file=None, encrypt_log=False)
"""The log in clear, as this benchmark's recorded numbers were measured."""
TEXT = "I moved to Lisbon last spring and I prefer tea over coffee in the morning."


def _turn(tenant: str, n: int) -> TurnAppended:
    return TurnAppended(
        event_id=uuid.uuid4(),
        tenant=tenant,
        principal=f"p{n % 50}",
        project=f"proj{n % 20}",
        session="s1",
        occurred_at=datetime.now(UTC),
        messages=[Message(ordinal=0, role=Role.USER, content=TEXT)],
    )


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _summary(latencies: list[float], turns: int, elapsed: float) -> dict[str, float]:
    cuts = statistics.quantiles(latencies, n=100)
    return {
        "p50_ms": round(cuts[49] * 1000, 2),
        "p99_ms": round(cuts[98] * 1000, 2),
        "turns_per_s": round(turns / elapsed, 1),
    }


async def _timed(engram: AsyncEngram, tenant: str, requests: int, size: int) -> dict[str, float]:
    latencies = []
    started = time.perf_counter()
    for i in range(requests):
        turns = [_turn(tenant, i * size + j) for j in range(size)]
        before = time.perf_counter()
        await engram.append_turns(turns)
        latencies.append(time.perf_counter() - before)
    return _summary(latencies, requests * size, time.perf_counter() - started)


async def _wait_up(url: str) -> None:
    deadline = time.monotonic() + 60
    async with httpx.AsyncClient() as client:
        while time.monotonic() < deadline:
            try:
                if (await client.get(f"{url}/healthz")).status_code == 200:
                    return
            except httpx.TransportError:
                pass
            await asyncio.sleep(0.1)
    raise RuntimeError("engram api did not answer")


async def _serve_and_measure(
    kafka: KafkaSettings, database_url: str, token: str, args: argparse.Namespace
) -> dict[str, object]:
    port = _free_port()
    env = subprocess_env(kafka, database_url, keys=CLEAR, ENGRAM_API_PORT=str(port))
    api = subprocess.Popen(
        [sys.executable, "-m", "engram", "api"], cwd=REPO, env=env, stderr=subprocess.DEVNULL
    )
    url = f"http://127.0.0.1:{port}"
    try:
        await _wait_up(url)
        tenant = "bench"
        async with AsyncEngram(url, token=token) as engram:
            await engram.append_turns([_turn(tenant, 0)])  # starts the producer
            single = await _timed(engram, tenant, args.requests, 1)
            batch = await _timed(engram, tenant, max(args.requests // 10, 5), args.batch)
        return {"single": single, f"batch_{args.batch}": batch}
    finally:
        api.send_signal(signal.SIGTERM)
        api.wait(timeout=20)


async def _refused(database_url: str, token: str) -> dict[str, float]:
    """The 503 with Kafka on a closed port, in process (no retries: the answer itself)."""
    from fastapi.testclient import TestClient

    from engram.api import create_api
    from engram.infra.settings import DatabaseSettings, Settings

    kafka = KafkaSettings(bootstrap=f"127.0.0.1:{_free_port()}")
    settings = Settings(kafka=kafka, database=DatabaseSettings(url=database_url))
    body = {"turns": [_turn("bench", 0).model_dump(mode="json")]}

    def post() -> tuple[int, float]:
        with TestClient(create_api(settings)) as client:
            before = time.perf_counter()
            response = client.post(
                "/v1/turns", json=body, headers={"Authorization": f"Bearer {token}"}
            )
            return response.status_code, time.perf_counter() - before

    status, seconds = await asyncio.to_thread(post)
    return {"status": status, "seconds": round(seconds, 3)}


async def main(args: argparse.Namespace) -> None:
    settings = load_settings()
    admin_url = settings.database.url.get_secret_value()
    name = f"engram_bench_{secrets.token_hex(4)}"
    admin = await asyncpg.connect(admin_url)
    await admin.execute(f'CREATE DATABASE "{name}"')
    database_url = f"{admin_url.rpartition('/')[0]}/{name}"
    prefix = f"bench{secrets.token_hex(4)}"
    kafka = settings.kafka.model_copy(
        update={
            "episodes_topic": f"{prefix}.episodes",
            "claims_topic": f"{prefix}.claims",
            "dlq_topic": f"{prefix}.dlq",
            "memory_events_topic": f"{prefix}.memory-events",
        }
    )
    try:
        conn = await asyncpg.connect(database_url)
        try:
            await migrate(conn)
            _, token = await create_token(conn, tenant="bench", principal=None)
        finally:
            await conn.close()
        report = await _serve_and_measure(kafka, database_url, token, args)
        report["refused_kafka_down"] = await _refused(database_url, token)
        print(json.dumps(report, indent=2))
    except EngramError as error:
        print(f"refused: {error}", file=sys.stderr)
        raise
    finally:
        await admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        await admin.close()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--requests", type=int, default=500)
    parser.add_argument("--batch", type=int, default=100)
    asyncio.run(main(parser.parse_args()))
