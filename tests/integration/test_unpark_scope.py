"""Unparking is scoped like the identities it acts on: an event id is unique per principal, so
an id parked for two principals of one project is not unparked for both by a request meant for
one. Real PostgreSQL; the backlog is written through its own functions."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime

import asyncpg
import pytest

from engram.schemas.common import principal_hash
from engram.watermarks.backlog import (
    AmbiguousUnpark,
    BacklogEntry,
    list_parked,
    park,
    record_pending_many,
    unpark,
)

pytestmark = pytest.mark.integration

TOPIC = "engram.episodes"
AT = datetime(2026, 12, 3, tzinfo=UTC)
SHARED_ID = uuid.UUID("0b7a3c1e-6f1f-4d55-9a51-3d3c2f5e0001")


def _entry(offset: int, principal: str) -> BacklogEntry:
    return BacklogEntry(
        TOPIC, 0, offset, "acme", "shared", SHARED_ID, AT, AT, principal_hash("acme", principal)
    )


async def _parked(pool: asyncpg.Pool, entries: list[BacklogEntry]) -> None:
    await record_pending_many(pool, entries)
    async with pool.acquire() as conn:
        for entry in entries:
            await park(conn, (entry.topic, entry.partition, entry.offset), kind="model_timeout")


async def test_an_id_parked_for_two_principals_needs_the_offset(pool: asyncpg.Pool) -> None:
    await _parked(pool, [_entry(10, "ana"), _entry(11, "bo")])

    with pytest.raises(AmbiguousUnpark, match="offsets 10, 11") as ambiguous:
        await unpark(pool, tenant="acme", project="shared", episode_id=SHARED_ID, actor="op")
    assert ambiguous.value.offsets == [10, 11]
    assert len(await list_parked(pool, tenant="acme", project="shared")) == 2, "nothing moved"

    one = await unpark(
        pool, tenant="acme", project="shared", episode_id=SHARED_ID, actor="op", offset=11
    )
    assert one == 1
    still = await list_parked(pool, tenant="acme", project="shared")
    assert [p.offset for p in still] == [10], "ana's episode stays parked"
    audits = await pool.fetchval("SELECT count(*) FROM formation_audit WHERE action = 'unpark'")
    assert audits == 1


async def test_one_principals_retried_appends_unpark_together(pool: asyncpg.Pool) -> None:
    await _parked(pool, [_entry(20, "ana"), _entry(21, "ana"), _entry(22, "bo")])

    both = await unpark(
        pool, tenant="acme", project="shared", episode_id=SHARED_ID, actor="op", offset=22
    )
    assert both == 1
    again = await unpark(pool, tenant="acme", project="shared", episode_id=SHARED_ID, actor="op")
    assert again == 2, "the same principal's two entries of one id are one episode"
    assert await list_parked(pool, tenant="acme", project="shared") == []


async def test_another_tenants_id_is_not_reached(pool: asyncpg.Pool) -> None:
    await _parked(pool, [_entry(30, "ana")])
    none = await unpark(pool, tenant="other", project="shared", episode_id=SHARED_ID, actor="op")
    assert none == 0
    assert len(await list_parked(pool, tenant="acme", project="shared")) == 1
