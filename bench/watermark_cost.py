"""The formed watermark's cost against a project's history: the indexed query the read API's
freshness and ``wait_for_offset`` use, next to the watermark's definition read as one scan of
the project's rows (what it replaced), in the same run and transaction.

For each history length it copies that many formed episodes (one open near the end) into the
dev database's backlog inside a transaction that is rolled back, then times five rounds of 100
calls of each query. Prints JSON: median milliseconds per call, and their ratio.

    .venv/bin/python -m bench.watermark_cost [--episodes 500,20000,100000]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import time

import asyncpg
import orjson

from engram.infra.settings import load_settings
from engram.watermarks.backlog import _WATERMARK
from tests.integration.test_watermark_query import COLUMNS, DEFINITION, formed_history


async def _ms_per_call(conn: asyncpg.Connection, query: str, project: str) -> float:
    await conn.fetchrow(query, "bench-watermark", project)
    rounds = []
    for _ in range(5):
        started = time.perf_counter()
        for _ in range(100):
            await conn.fetchrow(query, "bench-watermark", project)
        rounds.append((time.perf_counter() - started) * 1000 / 100)
    return statistics.median(rounds)


async def main(lengths: list[int]) -> list[dict[str, object]]:
    conn = await asyncpg.connect(load_settings().database.url.get_secret_value())
    results: list[dict[str, object]] = []
    try:
        for length in lengths:
            project = f"p{length}"
            rows = formed_history("bench-watermark", project, length)
            transaction = conn.transaction()
            await transaction.start()
            try:
                await conn.copy_records_to_table("formation_backlog", records=rows, columns=COLUMNS)
                await conn.execute("ANALYZE formation_backlog")
                scan = await _ms_per_call(conn, DEFINITION, project)
                indexed = await _ms_per_call(conn, _WATERMARK, project)
            finally:
                await transaction.rollback()
            results.append(
                {
                    "episodes": length,
                    "one_scan_ms": round(scan, 3),
                    "indexed_ms": round(indexed, 3),
                    "scan_over_indexed": round(scan / indexed, 1),
                }
            )
    finally:
        await conn.close()
    return results


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--episodes", default="500,20000,100000")
    args = parser.parse_args()
    lengths = [int(n) for n in args.episodes.split(",")]
    sys.stdout.write(orjson.dumps(asyncio.run(main(lengths)), option=orjson.OPT_INDENT_2).decode())
    sys.stdout.write("\n")
