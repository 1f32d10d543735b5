"""COPY against one INSERT … SELECT FROM unnest(arrays): what a statement per table costs
PostgreSQL per row, at the row counts a projector chunk writes.

The projector copies each table's rows with COPY, two round trips a table (and a savepoint pair
around the idempotent ones): about 34 round trips a chunk, during which PostgreSQL's backends
wait for the projector's next statement much of the time (``bench/projector.py --phases``). A
write path of few round trips would send each table's rows as arrays to one data-modifying
statement instead (with ``ON CONFLICT DO NOTHING`` for the idempotent ones, in place of the
savepoint); this measures what that costs PostgreSQL against COPY, on a table shaped
and indexed like ``evidence`` (``LIKE evidence INCLUDING ALL``), in alternating rounds:
microseconds a row of wall time and of the backend's CPU (``/proc``, 10 ms ticks, so each
figure covers ``--rows-per-cell`` rows).

    .venv/bin/python -m bench.insert_cost [--sizes 20,300] [--rounds 3] [--rows-per-cell 24000]
"""

from __future__ import annotations

import argparse
import asyncio
import secrets
import sys
import time
import uuid
from datetime import UTC, datetime
from typing import Any

import asyncpg
import orjson

from bench.throughput import cpu_seconds
from engram.infra.settings import load_settings

COLUMNS = (
    ("evidence_id", "uuid"),
    ("belief_id", "uuid"),
    ("tenant", "text"),
    ("principal", "text"),
    ("project", "text"),
    ("session", "text"),
    ("episode_id", "uuid"),
    ("source_topic", "text"),
    ("source_partition", "int4"),
    ("source_offset", "int8"),
    ("message_ordinal", "int4"),
    ("role", "text"),
    ("quote", "text"),
    ("span_start", "int4"),
    ("span_end", "int4"),
    ("extractor", "text"),
    ("run_id", "uuid"),
    ("occurred_at", "timestamptz"),
)


def evidence_rows(count: int, start: int) -> list[tuple[Any, ...]]:
    """Rows shaped like a projected chunk's evidence (random ids, as name-based ids are)."""
    now = datetime.now(UTC)
    quote = "I live in Lisbon and I work at Acme Robotics as a data engineer."
    return [
        (
            *(uuid.uuid4(), uuid.uuid4(), "bench", "ana", "p1", "s1", uuid.uuid4()),
            *("bench.claims", 0, start + i, 0, "user", quote, 0, len(quote)),
            *("deterministic/v7", uuid.uuid4(), now),
        )
        for i in range(count)
    ]


WAYS = ("copy", "unnest", "unnest_on_conflict")


async def _cell(
    conn: asyncpg.Connection, table: str, size: int, total: int, *, way: str
) -> tuple[float, float]:
    """Microseconds a row, wall and backend CPU, inserting ``total`` rows ``size`` at a time."""
    names = [name for name, _ in COLUMNS]
    unnest = ", ".join(f"${i}::{kind}[]" for i, (_, kind) in enumerate(COLUMNS, start=1))
    insert = f"INSERT INTO {table} ({', '.join(names)}) SELECT * FROM unnest({unnest})"
    if way == "unnest_on_conflict":
        insert += " ON CONFLICT DO NOTHING"
    statements = [evidence_rows(size, n * size) for n in range(max(total // size, 1))]
    pid = conn.get_server_pid()
    cpu, started = cpu_seconds(pid), time.perf_counter()
    for rows in statements:
        if way == "copy":
            await conn.copy_records_to_table(table, records=rows, columns=names)
        else:
            await conn.execute(insert, *(list(column) for column in zip(*rows, strict=True)))
    rows_written = sum(len(rows) for rows in statements)
    wall = (time.perf_counter() - started) / rows_written * 1e6
    return wall, (cpu_seconds(pid) - cpu) / rows_written * 1e6


async def main(sizes: list[int], rounds: int, total: int) -> dict[str, object]:
    conn = await asyncpg.connect(load_settings().database.url.get_secret_value())
    suffix = secrets.token_hex(3)
    tables = {way: f"bench_{way}_{suffix}" for way in WAYS}
    for table in tables.values():
        await conn.execute(f"CREATE TABLE {table} (LIKE evidence INCLUDING ALL)")
    report: dict[str, object] = {}
    try:
        for way, table in tables.items():  # prepare and plan
            await _cell(conn, table, sizes[0], sizes[0], way=way)
        for size in sizes:
            cells: dict[str, list[list[float]]] = {way: [] for way in WAYS}
            for _ in range(rounds):
                for way, table in tables.items():
                    wall, cpu = await _cell(conn, table, size, total, way=way)
                    cells[way].append([round(wall, 1), round(cpu, 1)])
            report[f"rows_per_statement_{size}"] = {
                f"{way}_us_per_row_wall_and_backend_cpu": rounds_ for way, rounds_ in cells.items()
            }
    finally:
        for table in tables.values():
            await conn.execute(f"DROP TABLE IF EXISTS {table}")
        await conn.close()
    return report


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="20,300")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--rows-per-cell", type=int, default=24000)
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    result = asyncio.run(main(sizes, args.rounds, args.rows_per_cell))
    sys.stdout.write(orjson.dumps(result, option=orjson.OPT_INDENT_2).decode() + "\n")
