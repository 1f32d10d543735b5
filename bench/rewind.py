"""What a late claims batch costs the projector: the rewind of its principal.

The projector resolves each principal's batches in canonical order (docs/architecture.md,
"Ordering"); a batch that belongs before some already applied makes it undo those (the suffix)
and resolve them again with the late one. This projects a history of N batches of one principal
through the projector's own store (``project_records``, in this process, no Kafka), then times
one more batch in canonical order (the baseline, same run, same history) against one dated in
the middle of the history (a suffix of N/2 batches) and one dated ten batches before its end (a
suffix of 10). Prints JSON: per history size, the three times and the ratios to the baseline.

    .venv/bin/python bench/rewind.py [--sizes 100 400 1600] [--repeats 3]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import time
import uuid
from datetime import UTC, datetime, timedelta

import asyncpg

from engram.formation.core import form_episode
from engram.formation.policy import FormationPolicy
from engram.formation.proposals import Proposal
from engram.infra.settings import load_settings
from engram.projections.beliefs.store import ClaimsRecord, project_records
from engram.projections.migrate import migrate
from engram.schemas.claims import ClaimsBatchFormed, SourcePosition
from engram.schemas.common import Role
from engram.schemas.episodes import Message, TurnAppended

TENANT = "bench"
TOPIC = "bench.rewind.claims"
CITIES = ["Cork", "Berlin", "Lisbon", "Porto", "Oslo", "Riga", "Turin", "Bergen"]
EPOCH = datetime(2026, 1, 1, tzinfo=UTC)
POLICY = FormationPolicy()


def batch(seq: int, at: datetime) -> ClaimsBatchFormed:
    """Principal ``ana``'s ``seq``-th turn at ``at``: a move (single-valued, so order matters)
    and a new tool."""
    city = CITIES[seq % len(CITIES)]
    text = f"I live in {city} and I use Tool{seq}."
    episode = TurnAppended(
        event_id=uuid.uuid5(uuid.NAMESPACE_URL, f"rewind/{seq}"),
        tenant=TENANT,
        principal="ana",
        project=f"proj{seq % 2}",
        session=f"s{seq // 20}",
        occurred_at=at,
        messages=[Message(ordinal=0, role=Role.USER, content=text)],
    )
    proposals = [
        Proposal("I", "lives_in", city, f"I live in {city}", "assert", "present", "bench"),
        Proposal("I", "uses", f"Tool{seq}", f"I use Tool{seq}", "assert", "present", "bench"),
    ]
    source = SourcePosition(topic="bench.episodes", partition=0, offset=seq)
    return form_episode(episode, POLICY, {0: proposals}, source=source)


async def _apply(conn: asyncpg.Connection, records: list[ClaimsRecord]) -> float:
    started = time.perf_counter()
    await project_records(conn, records, topic=TOPIC, partition=0, read_through=records[-1].offset)
    return time.perf_counter() - started


async def one_size(admin_url: str, size: int, repeats: int) -> dict[str, object]:
    name = f"engram_bench_rewind_{uuid.uuid4().hex[:8]}"
    admin = await asyncpg.connect(admin_url)
    await admin.execute(f'CREATE DATABASE "{name}"')
    conn = await asyncpg.connect(admin_url.rpartition("/")[0] + f"/{name}")
    try:
        await migrate(conn)
        history = [ClaimsRecord(batch(s, EPOCH + timedelta(minutes=s)), s) for s in range(size)]
        for start in range(0, size, 200):
            await _apply(conn, history[start : start + 200])
        offset, in_order, mid, near = size, [], [], []
        for r in range(repeats):
            # Dated after everything applied so far: resolved on top, no rewind.
            at = EPOCH + timedelta(minutes=size + r)
            in_order.append(await _apply(conn, [ClaimsRecord(batch(offset, at), offset)]))
            offset += 1
            # Dated in the middle of the history: half of it is undone and resolved again.
            at = EPOCH + timedelta(minutes=size // 2, seconds=r + 1)
            mid.append(await _apply(conn, [ClaimsRecord(batch(offset, at), offset)]))
            offset += 1
            # Dated ten batches before the end: a partition that lags a little.
            at = EPOCH + timedelta(minutes=size - 10, seconds=r + 1)
            near.append(await _apply(conn, [ClaimsRecord(batch(offset, at), offset)]))
            offset += 1
        baseline = statistics.median(in_order)
        late_mid, late_near = statistics.median(mid), statistics.median(near)
        return {
            "history_batches": size,
            "in_order_ms": round(baseline * 1000, 2),
            "late_mid_ms": round(late_mid * 1000, 2),
            "late_mid_over_in_order": round(late_mid / baseline, 1),
            "late_by_10_ms": round(late_near * 1000, 2),
            "late_by_10_over_in_order": round(late_near / baseline, 1),
        }
    finally:
        await conn.close()
        await admin.execute(f'DROP DATABASE "{name}" WITH (FORCE)')
        await admin.close()


async def main(sizes: list[int], repeats: int) -> dict[str, object]:
    admin_url = load_settings().database.url.get_secret_value()
    return {"runs": [await one_size(admin_url, size, repeats) for size in sizes]}


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[100, 400, 1600])
    parser.add_argument("--repeats", type=int, default=3)
    arguments = parser.parse_args()
    print(json.dumps(asyncio.run(main(arguments.sizes, arguments.repeats)), indent=2))
