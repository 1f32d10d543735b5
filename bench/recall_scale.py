"""Recall latency at scale: one principal with 100k messages in an index of 1M, against a
principal with 1k in the same index, in the same run.

The messages are the dev conversations' real text (every message of ``--turns``, both roles),
repeated with fresh ids and times, written straight into ``message`` of a scratch database by
one ``INSERT … SELECT`` per 100k rows (the vector and its GIN index computed as the indexer's
writes compute them); the other principals share the rest. Then the questions of ``--qa`` (the
first ``--questions``) are asked through :func:`projections.recall.recall` — the code of
``GET /v1/recall``, first page of 10 — of the heavy principal and of the light one, alternating,
one at a time (the rate this bench offers: one question in flight). Prints JSON: p50, p99 and
max in milliseconds for each, and their ratio.

    .venv/bin/python -m bench.recall_scale --turns /work/shared/data/locomo-dev.jsonl \\
        --qa /work/shared/data/locomo-dev-qa.jsonl --heavy 100000 --total 1000000
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import statistics
import sys
import time
from pathlib import Path

import asyncpg
import orjson

from engram.cli.evaluation.recall import load_questions, percentile, scratch_database
from generations.reading import reading
from infra.logs import configure_logging
from infra.settings import load_settings
from ingest.jsonl import read_episodes
from projections.recall import recall
from projections.search import UnsearchableQuery
from schemas.episodes import episode_messages

TENANT = "bench"
HEAVY, LIGHT = "heavy", "light"
STEP = 100_000

_CORPUS = "CREATE TABLE corpus (n integer PRIMARY KEY, content text NOT NULL)"

_FILL = """
INSERT INTO message (tenant, principal, project, session, episode_id, message_ordinal, role,
                     author, content, occurred_at, source_partition, source_offset)
SELECT $1, CASE WHEN $4::int > 0 THEN $2 || (g % $4) ELSE $2 END, 'p', 's' || (g / 100),
       md5($2 || g)::uuid, 0, 'user', NULL, c.content,
       timestamptz '2026-01-01' + g * interval '30 seconds', 0, g
FROM generate_series($3::bigint, $3::bigint + $5 - 1) AS g
JOIN corpus c ON c.n = g % $6
"""
"""Rows ``$3 .. $3 + $5 - 1`` for principal ``$2`` (or ``$2`` plus one of ``$4`` suffixes),
text cycling through the ``$6`` corpus messages."""


def corpus(turns: Path) -> list[str]:
    return [m.content for e in read_episodes(turns) for m in episode_messages(e)]


async def fill(conn: asyncpg.Connection, texts: list[str], heavy: int, total: int) -> float:
    """Write the messages; seconds it took."""
    await conn.execute(_CORPUS)
    await conn.copy_records_to_table("corpus", records=list(enumerate(texts)))
    started = time.perf_counter()
    plan = [(HEAVY, 0, heavy), (LIGHT, 0, 1_000)]
    others = total - heavy - 1_000
    if others > 0:
        plan.append(("other-", max(others // 1_000, 1), others))
    first = 0
    for principal, spread, count in plan:
        for start in range(0, count, STEP):
            size = min(STEP, count - start)
            await conn.execute(_FILL, TENANT, principal, first + start, spread, size, len(texts))
        first += count
    await conn.execute("ANALYZE message")
    return time.perf_counter() - started


async def ask(pool: asyncpg.Pool, principal: str, question: str) -> float:
    started = time.perf_counter()
    async with reading(pool, principal=(TENANT, principal)) as conn:
        with contextlib.suppress(UnsearchableQuery):  # timed all the same
            await recall(conn, tenant=TENANT, principal=principal, query=question, limit=10)
    return (time.perf_counter() - started) * 1000


def summary(values: list[float]) -> dict[str, float]:
    return {
        "p50_ms": round(percentile(values, 0.50), 2),
        "p99_ms": round(percentile(values, 0.99), 2),
        "max_ms": round(max(values), 2),
        "mean_ms": round(statistics.fmean(values), 2),
    }


async def main(turns: Path, qa: Path, heavy: int, total: int, questions: int) -> dict[str, object]:
    texts = corpus(turns)
    asked = [q.text for q in load_questions(qa)[:questions]]
    admin = load_settings().database.url.get_secret_value()
    latencies: dict[str, list[float]] = {HEAVY: [], LIGHT: []}
    async with scratch_database(admin) as url:
        conn = await asyncpg.connect(url)
        try:
            fill_s = await fill(conn, texts, heavy, total)
            rows = await conn.fetchval("SELECT count(*) FROM message")
        finally:
            await conn.close()
        pool = await asyncpg.create_pool(url, min_size=1, max_size=2)
        try:
            for text in asked:
                for principal in (HEAVY, LIGHT):
                    latencies[principal].append(await ask(pool, principal, text))
        finally:
            await pool.close()
    heavy_s, light_s = summary(latencies[HEAVY]), summary(latencies[LIGHT])
    return {
        "messages": rows,
        "heavy_principal_messages": heavy,
        "light_principal_messages": 1_000,
        "fill_seconds": round(fill_s, 1),
        "questions": len(asked),
        "heavy": heavy_s,
        "light": light_s,
        "p99_ratio_heavy_over_light": round(heavy_s["p99_ms"] / light_s["p99_ms"], 2),
    }


if __name__ == "__main__":
    configure_logging("warning")  # stdout is the JSON report
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=Path, required=True)
    parser.add_argument("--qa", type=Path, required=True)
    parser.add_argument("--heavy", type=int, default=100_000)
    parser.add_argument("--total", type=int, default=1_000_000)
    parser.add_argument("--questions", type=int, default=200)
    args = parser.parse_args()
    result = asyncio.run(main(args.turns, args.qa, args.heavy, args.total, args.questions))
    sys.stdout.write(orjson.dumps(result, option=orjson.OPT_INDENT_2).decode() + "\n")
