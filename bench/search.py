"""Search latency over beliefs formed by the real projector, next to belief detail in the same
run.

Forms ``--beliefs`` distinct beliefs ("I use <tool> for <topic>") with the formation core in
process, half for one heavy principal and the rest spread over ``--principals`` others,
projects them through the real ``BeliefProjector`` into a fresh, migrated database, then times
sequential reads of the heavy principal through the same functions the API calls:

  detail         get_belief: one belief with its evidence (the baseline);
  search_rare    a word in one belief;
  search_topic   a topic word (the heavy principal has every other topic: 2/``TOPICS`` of
                 its beliefs match; first page of 20);
  search_all     a word in every one of them (first page of 20: every match is ranked).

Prints JSON with p50/p99 in milliseconds and each p50 over detail's.

    .venv/bin/python -m bench.search --beliefs 20000
"""

from __future__ import annotations

import argparse
import asyncio
import secrets
import statistics
import sys
import time
import uuid
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime, timedelta

import asyncpg
import orjson

from bench.projector import publish
from bench.throughput import fresh, measure_projector
from engram.formation.core import form_episode
from engram.formation.policy import FormationPolicy
from engram.formation.proposals import Proposal
from engram.generations.reading import reading
from engram.infra.settings import load_settings
from engram.projections.reads.queries import get_belief
from engram.projections.reads.search import search_beliefs
from engram.schemas.claims import ClaimsBatchFormed, SourcePosition
from engram.schemas.episodes import Message, TurnAppended

TOPICS = [
    "gardening", "taxes", "travel", "cooking", "running", "photography", "chess", "music",
    "painting", "sailing", "budgets", "reading", "hiking", "coding", "baking", "cycling",
    "climbing", "knitting", "fishing", "writing", "skiing", "swimming", "singing", "dancing",
    "pottery", "carpentry", "astronomy", "birding", "camping", "surfing", "yoga", "tennis",
    "golf", "rowing", "archery", "fencing", "juggling", "origami", "calligraphy", "brewing",
    "beekeeping", "woodturning", "embroidery", "kayaking", "diving", "bouldering", "snowboarding",
    "skating", "boxing", "judo",
]  # fmt: skip
HEAVY = "heavy"


def belief_batches(count: int, tenant: str, principals: int) -> list[ClaimsBatchFormed]:
    """One batch per belief: half the heavy principal's, the rest round-robin over others."""
    policy = FormationPolicy()
    start = datetime(2026, 1, 1, tzinfo=UTC)
    batches = []
    for i in range(count):
        who = HEAVY if i % 2 == 0 else f"p{i % principals}"
        obj = f"Tool{i} for {TOPICS[i % len(TOPICS)]}"
        text = f"I use {obj}."
        turn = TurnAppended(
            event_id=uuid.uuid5(uuid.NAMESPACE_URL, f"bench-search/{tenant}/{i}"),
            tenant=tenant,
            principal=who,
            project=f"proj{i % 4}",
            session="s",
            occurred_at=start + timedelta(minutes=i),
            messages=[Message(ordinal=0, role="user", content=text)],
        )
        proposal = Proposal("I", "uses", obj, f"I use {obj}", "assert", "present", "bench")
        source = SourcePosition(topic="bench.episodes", partition=0, offset=i)
        batches.append(form_episode(turn, policy, {0: [proposal]}, source=source))
    return batches


async def timed(call: Callable[[], Awaitable[object]], repeats: int) -> dict[str, float]:
    for _ in range(max(3, repeats // 20)):  # warm the plan and the buffers
        await call()
    samples = []
    for _ in range(repeats):
        started = time.perf_counter()
        await call()
        samples.append((time.perf_counter() - started) * 1000)
    samples.sort()
    return {
        "p50_ms": round(statistics.median(samples), 3),
        "p99_ms": round(samples[min(len(samples) - 1, int(len(samples) * 0.99))], 3),
    }


async def measure(db_url: str, tenant: str, repeats: int) -> dict[str, dict[str, float]]:
    pool = await asyncpg.create_pool(db_url, min_size=1, max_size=2)
    try:
        who = (tenant, HEAVY)
        belief_id = await pool.fetchval(
            "SELECT belief_id FROM belief WHERE tenant = $1 AND principal = $2 LIMIT 1", *who
        )

        async def detail() -> object:
            async with reading(pool, principal=who) as conn:
                return await get_belief(conn, tenant=tenant, principal=HEAVY, belief_id=belief_id)

        def search(query: str) -> Callable[[], Awaitable[object]]:
            async def run() -> object:
                async with reading(pool, principal=who) as conn:
                    return await search_beliefs(
                        conn, tenant=tenant, principal=HEAVY, query=query, limit=20
                    )

            return run

        return {
            "detail": await timed(detail, repeats),
            "search_rare": await timed(search("Tool0"), repeats),
            "search_topic": await timed(search(TOPICS[0]), repeats),
            "search_all": await timed(search("use"), repeats),
        }
    finally:
        await pool.close()


async def main(count: int, principals: int, repeats: int) -> dict[str, object]:
    settings = load_settings()
    run = "srch" + secrets.token_hex(3)
    batches = belief_batches(count, run, principals)
    kafka, db_url = await fresh(settings.kafka, settings.database.url.get_secret_value(), run)
    await publish(kafka, batches)
    projected_per_s = (await measure_projector(kafka, db_url, count)).per_s
    conn = await asyncpg.connect(db_url)
    heavy = await conn.fetchval(
        "SELECT count(*) FROM belief WHERE tenant = $1 AND principal = $2", run, HEAVY
    )
    total = await conn.fetchval("SELECT count(*) FROM belief")
    await conn.execute("ANALYZE")
    await conn.close()
    reads = await measure(db_url, run, repeats)
    base = reads["detail"]["p50_ms"]
    return {
        "beliefs": total,
        "heavy_principal_beliefs": heavy,
        "projector_batches_per_s": round(projected_per_s, 1),
        "repeats": repeats,
        **reads,
        "p50_over_detail": {k: round(v["p50_ms"] / base, 2) for k, v in reads.items()},
    }


if __name__ == "__main__":
    from engram.infra.logs import configure_logging

    configure_logging("warning")
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--beliefs", type=int, default=20_000)
    parser.add_argument("--principals", type=int, default=50)
    parser.add_argument("--repeats", type=int, default=200)
    args = parser.parse_args()
    result = asyncio.run(main(args.beliefs, args.principals, args.repeats))
    sys.stdout.write(orjson.dumps(result, option=orjson.OPT_INDENT_2).decode() + "\n")
