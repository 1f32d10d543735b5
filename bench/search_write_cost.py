"""What the search column costs the projector: the same claims projected, in the same run, into
a database as migrated (``belief.search_vector`` computed on every insert and update, GIN index
maintained), into one without the GIN index, and into one where migration 0012's column and
index were dropped again.

Rounds alternate through the three so a slow spell on a shared machine hits each; prints JSON
with each variant's batches/s and its best and median over the variant without search.

    .venv/bin/python -m bench.search_write_cost --turns 3000 --rounds 2
"""

from __future__ import annotations

import argparse
import asyncio
import secrets
import statistics
import sys

import asyncpg
import orjson

from bench.projector import form_batches, publish
from bench.throughput import fresh, measure_projector
from engram.infra.settings import KafkaSettings, load_settings
from engram.projections.migrate import migrate

VARIANTS = {
    "search": "",
    "column_no_index": "DROP INDEX belief_search",
    "no_search": "DROP INDEX belief_search; ALTER TABLE belief DROP COLUMN search_vector",
}


async def fresh_database(admin_url: str, name: str, *, undo: str) -> str:
    """A new, migrated database, then ``undo`` (part of migration 0012 taken back)."""
    conn = await asyncpg.connect(admin_url)
    await conn.execute(f'CREATE DATABASE "{name}"')
    await conn.close()
    db_url = admin_url.rpartition("/")[0] + f"/{name}"
    conn = await asyncpg.connect(db_url)
    try:
        await migrate(conn)
        if undo:
            await conn.execute(undo)
    finally:
        await conn.close()
    return db_url


async def one_round(admin_url: str, kafka: KafkaSettings, count: int, *, undo: str) -> float:
    """Batches/s of a projector reading the published claims into a database of its own."""
    name = f"{kafka.group_id.removesuffix('-formation')}_{secrets.token_hex(2)}"
    db_url = await fresh_database(admin_url, name, undo=undo)
    run = await measure_projector(kafka.model_copy(update={"group_id": name}), db_url, count)
    return run.per_s


async def main(count: int, rounds: int) -> dict[str, object]:
    settings = load_settings()
    admin_url = settings.database.url.get_secret_value()
    run = "swc" + secrets.token_hex(3)
    batches = await form_batches(count, tenant=run)
    kafka, _ = await fresh(settings.kafka, admin_url, run)
    await publish(kafka, batches)
    rates: dict[str, list[float]] = {variant: [] for variant in VARIANTS}
    for _ in range(rounds):
        for variant, undo in VARIANTS.items():
            rates[variant].append(await one_round(admin_url, kafka, count, undo=undo))
    base = rates["no_search"]
    return {
        "batches": count,
        "rounds": rounds,
        "batches_per_s": {v: [round(r, 1) for r in rs] for v, rs in rates.items()},
        "best_over_no_search": {v: round(max(rs) / max(base), 3) for v, rs in rates.items()},
        "median_over_no_search": {
            v: round(statistics.median(rs) / statistics.median(base), 3) for v, rs in rates.items()
        },
    }


if __name__ == "__main__":
    from engram.infra.logs import configure_logging

    configure_logging("warning")
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=3000)
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args()
    result = asyncio.run(main(args.turns, args.rounds))
    sys.stdout.write(orjson.dumps(result, option=orjson.OPT_INDENT_2).decode() + "\n")
