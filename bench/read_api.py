"""Read API latency over a large projection: p50/p99 of list pages and belief detail at a fixed
request rate, next to ``/healthz`` (one ``SELECT 1`` through the same stack) measured in the
same run as the baseline.

The projection is :mod:`bench.read_corpus` (``--beliefs``, one million by default), formed and
written through the projector's own store; a stopped or finished generation is resumed or
reused. The API is a real ``engram api`` process on that database, called with an operator's
token (so every request pays the token check it pays in production). Requests are sent
open-loop at ``--rate`` per second, and each latency is measured from the moment the request
was due, so a server that falls behind shows it instead of slowing the load down.

  list_first   first page (50) of a random principal's current beliefs, with their evidence
  list_deep    a page 10 pages in, through a cursor the API handed out
  list_filter  first page of a relation filter with min_confidence
  detail       one random belief: evidence, supersession chain, corrections, forming run
  search       only where the API has ``/v1/search`` (not on this branch: reported as skipped)

and, apart from HTTP, the same list and detail reads called directly on one connection
(``query_only``): the database's share of a request.

    .venv/bin/python -m bench.read_api --beliefs 1000000 --rate 50 --requests 1000
"""

from __future__ import annotations

import argparse
import asyncio
import random
import signal
import socket
import statistics
import subprocess
import sys
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import asyncpg
import httpx
import orjson

from bench.read_corpus import TENANT, Corpus, arguments, generate
from engram.infra.settings import KafkaSettings, KeysSettings, load_settings, subprocess_env
from engram.projections.reads.pages import BeliefFilter, page_beliefs
from engram.projections.reads.queries import get_belief
from engram.service.tokens import create_token

REPO = Path(__file__).resolve().parents[1]
CLEAR = KeysSettings(kek=None, kek_file=None, encrypt_log=False)
"""The log in clear, as this benchmark's recorded numbers were measured."""
CURRENT = BeliefFilter()
Request = tuple[str, dict[str, str]]


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


async def _random_beliefs(conn: asyncpg.Connection, count: int) -> list[asyncpg.Record]:
    """``count`` beliefs at random: a block sample on a large table, every row on a small one."""
    rows = await conn.fetch(
        "SELECT principal, belief_id FROM belief TABLESAMPLE SYSTEM (2) LIMIT $1", count
    )
    if len(rows) < count // 2:
        rows = await conn.fetch(
            "SELECT principal, belief_id FROM belief ORDER BY random() LIMIT $1", count
        )
    return list(rows)


async def _sample(url: str, count: int) -> tuple[str, list[tuple[str, str]]]:
    """An operator token, and ``count`` random (principal, belief id) pairs."""
    conn = await asyncpg.connect(url)
    try:
        _, token = await create_token(conn, tenant=TENANT, principal=None)
        rows = await _random_beliefs(conn, count)
    finally:
        await conn.close()
    return token, [(row["principal"], str(row["belief_id"])) for row in rows]


async def _deep_cursors(client: httpx.AsyncClient, principals: list[str]) -> list[Request]:
    """For each principal, the request for the page 10 pages into their current beliefs."""
    deep = []
    for principal in principals:
        params = {"principal": principal, "limit": "50"}
        for _ in range(10):
            page = (await client.get("/v1/beliefs", params=params)).json()
            if page["next_cursor"] is None:
                break
            params = {**params, "cursor": page["next_cursor"]}
        deep.append(("/v1/beliefs", params))
    return deep


async def _at_rate(
    client: httpx.AsyncClient, make: Callable[[int], Request], count: int, rate: float
) -> dict[str, Any]:
    """Send ``count`` requests open-loop at ``rate``/s; latency from each one's due time."""
    latencies: list[float] = []
    errors = 0
    start = time.perf_counter() + 0.05

    async def one(i: int) -> None:
        nonlocal errors
        due = start + i / rate
        await asyncio.sleep(max(0.0, due - time.perf_counter()))  # the schedule, not a sync
        path, params = make(i)
        response = await client.get(path, params=params)
        latencies.append((time.perf_counter() - due) * 1000)
        errors += response.status_code != 200

    await asyncio.gather(*(one(i) for i in range(count)))
    ordered = sorted(latencies)
    return {
        "requests": count,
        "errors": errors,
        "p50_ms": round(statistics.median(ordered), 2),
        "p99_ms": round(ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))], 2),
    }


def _api(url: str, port: int, log: Path) -> subprocess.Popen[bytes]:
    env = subprocess_env(KafkaSettings(), url, keys=CLEAR, ENGRAM_API_PORT=str(port))
    with log.open("wb") as out:
        return subprocess.Popen(
            [sys.executable, "-m", "engram", "api"], cwd=REPO, env=env, stdout=out, stderr=out
        )


async def _wait_up(client: httpx.AsyncClient, deadline_s: float = 60) -> None:
    deadline = time.monotonic() + deadline_s
    while True:
        try:
            if (await client.get("/healthz")).status_code == 200:
                return
        except httpx.TransportError:
            pass
        if time.monotonic() > deadline:
            raise RuntimeError("engram api did not come up")
        await asyncio.sleep(0.2)  # polling a process that is starting


async def measure(url: str, *, rate: float, requests: int, log: Path) -> dict[str, Any]:
    token, sample = await _sample(url, 2000)
    rng = random.Random(7)
    port = _free_port()
    api = _api(url, port, log)
    headers = {"Authorization": f"Bearer {token}"}
    limits = httpx.Limits(max_connections=64)
    try:
        async with httpx.AsyncClient(
            base_url=f"http://127.0.0.1:{port}", headers=headers, limits=limits, timeout=30
        ) as client:
            await _wait_up(client)
            people = sorted({p for p, _ in sample})
            deep = await _deep_cursors(client, rng.sample(people, min(20, len(people))))
            search = (await client.get("/openapi.json")).json()["paths"].get("/v1/search")
            kinds: dict[str, Callable[[int], Request]] = {
                "baseline_healthz": lambda i: ("/healthz", {}),
                "list_first": lambda i: ("/v1/beliefs", {"principal": people[i % len(people)]}),
                "list_deep": lambda i: deep[i % len(deep)],
                "list_filter": lambda i: (
                    "/v1/beliefs",
                    {
                        "principal": people[i % len(people)],
                        "relation": "uses",
                        "min_confidence": "0.3",
                    },
                ),
                "detail": lambda i: (
                    f"/v1/beliefs/{sample[i % len(sample)][1]}",
                    {"principal": sample[i % len(sample)][0]},
                ),
            }
            if search is not None:
                kinds["search"] = lambda i: (
                    "/v1/search",
                    {"principal": people[i % len(people)], "q": "tool"},
                )
            results = {
                name: await _at_rate(client, make, requests, rate) for name, make in kinds.items()
            }
    finally:
        api.send_signal(signal.SIGTERM)
        api.wait(timeout=30)
    base = results["baseline_healthz"]["p99_ms"]
    for result in results.values():
        result["p99_over_baseline"] = round(result["p99_ms"] / base, 2) if base else None
    if search is None:
        results["search"] = {"skipped": "no /v1/search on this branch's API"}
    return results


async def measure_queries(url: str, *, requests: int) -> dict[str, Any]:
    """The same reads as the API's, called directly on one connection one after another: what
    the database work costs without HTTP, the token check or a loaded event loop."""
    conn = await asyncpg.connect(url)
    rng = random.Random(11)
    try:
        rows = await _random_beliefs(conn, requests)
        sample = [(row["principal"], row["belief_id"]) for row in rows]
        people = sorted({p for p, _ in sample})
        reads: dict[str, Callable[[int], Awaitable[object]]] = {
            "list_first": lambda i: page_beliefs(
                conn, tenant=TENANT, principal=people[i % len(people)], chosen=CURRENT, limit=50
            ),
            "detail": lambda i: get_belief(
                conn,
                tenant=TENANT,
                principal=sample[i % len(sample)][0],
                belief_id=sample[i % len(sample)][1],
            ),
        }
        timings: dict[str, Any] = {}
        for name, read in reads.items():
            took = []
            for i in rng.sample(range(len(sample)), min(requests, len(sample))):
                began = time.perf_counter()
                async with conn.transaction():
                    await read(i)
                took.append((time.perf_counter() - began) * 1000)
            took.sort()
            timings[name] = {
                "p50_ms": round(statistics.median(took), 2),
                "p99_ms": round(took[min(len(took) - 1, int(len(took) * 0.99))], 2),
            }
        return timings
    finally:
        await conn.close()


async def _beliefs(url: str) -> int:
    conn = await asyncpg.connect(url)
    try:
        return int(await conn.fetchval("SELECT count(*) FROM belief"))
    finally:
        await conn.close()


def main(args: argparse.Namespace) -> dict[str, Any]:
    corpus = Corpus(args.beliefs, args.principals, args.workers)
    admin = load_settings().database.url.get_secret_value()
    generated = generate(admin, corpus)
    url = admin.rpartition("/")[0] + f"/{corpus.database}"
    log = REPO / ".dev" / "bench-read-api.log"
    log.parent.mkdir(exist_ok=True)
    results = asyncio.run(measure(url, rate=args.rate, requests=args.requests, log=log))
    queries = asyncio.run(measure_queries(url, requests=args.requests))
    return {
        "beliefs": asyncio.run(_beliefs(url)),
        "principals": corpus.principals,
        "rate_per_s": args.rate,
        "generation": generated,
        "latency": results,
        "query_only": queries,
    }


if __name__ == "__main__":
    from engram.infra.logs import configure_logging

    configure_logging("warning")
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    arguments(parser)
    parser.add_argument("--rate", type=float, default=50.0, help="requests per second")
    parser.add_argument("--requests", type=int, default=1000, help="requests per kind")
    result = main(parser.parse_args())
    sys.stdout.write(orjson.dumps(result, option=orjson.OPT_INDENT_2).decode() + "\n")
