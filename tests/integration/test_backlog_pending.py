"""Recording a chunk of read episodes in one statement: new rows are pending, a redelivered
episode keeps its state and its attempts. Real PostgreSQL."""

from __future__ import annotations

import uuid

import asyncpg
import pytest

from engram.watermarks.backlog import BacklogEntry, record_failure, record_pending_many, watermark
from tests.support.episodes import EPOCH

pytestmark = pytest.mark.integration


def entry(offset: int) -> BacklogEntry:
    return BacklogEntry("episodes", 0, offset, "t", "garden", uuid.uuid4(), EPOCH, EPOCH)


async def test_a_chunk_is_recorded_pending_in_one_statement_and_redelivery_keeps_attempts(
    pool: asyncpg.Pool,
) -> None:
    first = [entry(offset) for offset in range(5)]
    assert await record_pending_many(pool, first) == {("episodes", 0, o): 0 for o in range(5)}
    await record_failure(pool, first[2], kind="http_status", park=False)
    await record_failure(pool, first[3], kind="http_status", park=True)

    again = await record_pending_many(pool, [first[2], first[3], entry(5)])

    assert again == {("episodes", 0, 2): 1, ("episodes", 0, 3): 1, ("episodes", 0, 5): 0}
    states = await pool.fetch('SELECT "offset", state FROM formation_backlog ORDER BY "offset"')
    assert [r["state"] for r in states] == ["pending"] * 3 + ["parked"] + ["pending"] * 2
    mark = await watermark(pool, tenant="t", project="garden")
    assert mark.log_offset == 5 and mark.pending == 5 and mark.parked == 1


async def test_an_empty_chunk_writes_nothing(pool: asyncpg.Pool) -> None:
    assert await record_pending_many(pool, []) == {}
