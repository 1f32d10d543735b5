"""A session's messages read back from the message index in the order they were said, a page
at a time, for one principal only (``GET /v1/sessions/{session}/messages``'s read)."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta

import asyncpg
import pytest

from engram.projections.reads.cursor import InvalidCursor
from engram.projections.reads.session_messages import page_session_messages

pytestmark = pytest.mark.integration
T0 = datetime(2026, 12, 1, 10, tzinfo=UTC)


async def index(
    pool: asyncpg.Pool, principal: str, project: str, session: str, offset: int, *texts: str
) -> None:
    episode = uuid.uuid5(uuid.NAMESPACE_URL, f"{principal}/{project}/{session}/{offset}")
    for ordinal, text in enumerate(texts):
        await pool.execute(
            "INSERT INTO message (tenant, principal, project, session, episode_id, "
            "message_ordinal, role, content, occurred_at, source_partition, source_offset) "
            "VALUES ('t', $1, $2, $3, $4, $5, $6, $7, $8, 0, $9)",
            principal,
            project,
            session,
            episode,
            ordinal,
            "user" if ordinal % 2 == 0 else "assistant",
            text,
            T0 + timedelta(minutes=offset),
            offset,
        )


async def test_a_session_reads_back_in_order_a_page_at_a_time_for_its_principal(
    pool: asyncpg.Pool,
) -> None:
    await index(pool, "ana", "p", "s", 2, "Second question?", "Second answer.")
    await index(pool, "ana", "p", "s", 1, "First question?", "First answer.", "More.")
    await index(pool, "ana", "other", "s", 3, "Elsewhere.")
    await index(pool, "bo", "p", "s", 4, "Bo's words.")

    read: list[str] = []
    cursor = None
    while True:
        page = await page_session_messages(
            pool, tenant="t", principal="ana", session="s", project="p", limit=2, cursor=cursor
        )
        assert len(page.items) <= 2
        read += [m.content for m in page.items]
        if page.next_cursor is None:
            break
        cursor = page.next_cursor
    assert read == [
        "First question?",
        "First answer.",
        "More.",
        "Second question?",
        "Second answer.",
    ]

    every = await page_session_messages(
        pool, tenant="t", principal="ana", session="s", project=None, limit=50, cursor=None
    )
    assert [m.content for m in every.items][-1] == "Elsewhere." and every.next_cursor is None
    nobody = await page_session_messages(
        pool, tenant="t", principal="cy", session="s", project=None, limit=50, cursor=None
    )
    assert nobody.items == []
    with pytest.raises(InvalidCursor):
        await page_session_messages(
            pool, tenant="t", principal="ana", session="s", project="p", limit=2, cursor="bm9wZQ"
        )
