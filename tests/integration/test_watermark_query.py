"""The watermark read from indexes answers what the watermark's definition does, read as one scan
of the project's rows (the query it replaced, kept here as the reference), over random backlogs
of every state — empty projects, all open, all formed, parked and requeued episodes among them.
Real PostgreSQL."""

from __future__ import annotations

import random
import re
import uuid
from datetime import UTC, datetime, timedelta

import asyncpg
import pytest

from engram.watermarks.backlog import _WATERMARK, watermark

pytestmark = pytest.mark.integration

DEFINITION = """
WITH project AS (
    SELECT "offset", state, appended_at FROM formation_backlog
    WHERE tenant = $1 AND project = $2
), open AS (
    SELECT min("offset") AS lowest, count(*) AS pending, min(appended_at) AS oldest
    FROM project WHERE state IN ('pending', 'requeued')
)
SELECT
    (SELECT max("offset") FROM project) AS log_offset,
    (SELECT max(p."offset") FROM project p, open o
      WHERE p.state IN ('formed', 'parked') AND (o.lowest IS NULL OR p."offset" < o.lowest))
      AS formed_offset,
    (SELECT count(*) FROM project WHERE state = 'parked') AS parked,
    o.pending, o.oldest
FROM open o
"""
"""The formed watermark's definition: the highest formed or parked offset below every open one."""

STATES = ("pending", "formed", "parked", "requeued")
COLUMNS = [
    "topic",
    "partition",
    "offset",
    "tenant",
    "project",
    "episode_id",
    "occurred_at",
    "appended_at",
    "state",
]
START = datetime(2026, 1, 1, tzinfo=UTC)


def _backlog(
    rng: random.Random, tenant: str, project: str, partition: int
) -> list[tuple[object, ...]]:
    mostly = rng.choice([None, "formed", "pending"])  # runs of one state, or any mix
    rows: list[tuple[object, ...]] = []
    for offset in rng.sample(range(400), rng.randint(0, 60)):
        state = mostly if mostly is not None and rng.random() < 0.8 else rng.choice(STATES)
        at = START + timedelta(seconds=rng.randint(0, 10_000))
        rows.append(("episodes", partition, offset, tenant, project, uuid.uuid4(), at, at, state))
    return rows


def formed_history(tenant: str, project: str, episodes: int) -> list[tuple[object, ...]]:
    """Backlog rows of ``episodes`` formed episodes of one project, the tenth from last still
    pending: a long history with its open window at the end."""
    rows: list[tuple[object, ...]] = [
        ("episodes", 0, offset, tenant, project, uuid.uuid4(), START, START, "formed")
        for offset in range(episodes)
    ]
    rows[-10] = (*rows[-10][:8], "pending")
    return rows


async def test_the_indexed_watermark_answers_the_definition(pool: asyncpg.Pool) -> None:
    rng = random.Random(13)
    projects = [(f"t{i % 3}", f"p{i}", i) for i in range(40)]
    rows = [row for t, p, i in projects for row in _backlog(rng, t, p, i)]
    await pool.copy_records_to_table(
        "formation_backlog",
        records=rows,
        columns=COLUMNS,
    )
    states = {row[8] for row in rows}
    assert states == set(STATES), "every state appears somewhere"
    for tenant, project, _ in [*projects, ("t0", "nobody", -1)]:
        expected = await pool.fetchrow(DEFINITION, tenant, project)
        found = await watermark(pool, tenant=tenant, project=project)
        assert (
            found.log_offset,
            found.formed_offset,
            found.parked,
            found.pending,
            found.oldest_pending_appended_at,
        ) == tuple(expected), (tenant, project)


async def test_the_watermark_reads_indexes_not_the_project(pool: asyncpg.Pool) -> None:
    """With 20,000 episodes, one of them still open, no step of the plan reads more than a row
    or two: the read API's freshness costs the same at any history length."""
    rows = formed_history("t", "big", 20_000)
    await pool.copy_records_to_table(
        "formation_backlog",
        records=rows,
        columns=COLUMNS,
    )
    await pool.execute("ANALYZE formation_backlog")
    plan = [r[0] for r in await pool.fetch(f"EXPLAIN (ANALYZE) {_WATERMARK}", "t", "big")]
    read = [int(n) for line in plan for n in re.findall(r"actual time=\S+ rows=(\d+)", line)]
    removed = [int(n) for line in plan for n in re.findall(r"Rows Removed by Filter: (\d+)", line)]
    # The definition's single scan reads all 20,000 rows here.
    assert max(read) <= 2 and sum(removed) == 0, "\n".join(plan)
    mark = await watermark(pool, tenant="t", project="big")
    assert (mark.formed_offset, mark.pending, mark.log_offset) == (19_989, 1, 19_999)
