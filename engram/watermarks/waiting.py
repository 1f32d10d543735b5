"""Waiting for formation on a condition with a deadline: how callers synchronise, not sleeps."""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import Awaitable, Callable, Collection

import asyncpg

from engram.generations.reading import reading
from engram.infra.errors import EngramFailure
from engram.schemas.api import LogPosition
from engram.watermarks.backlog import watermark


class FormationTimeout(EngramFailure, TimeoutError):
    """Formation did not reach the asked offsets in time: it may later, so it is retriable."""

    code = "formation_timeout"
    retriable = True
    exit_code = 1


async def poll_until(
    check: Callable[[], Awaitable[bool]], *, timeout_s: float, poll_s: float = 0.1
) -> bool:
    """True as soon as ``check()`` is; False once ``timeout_s`` has passed without it."""
    deadline = time.monotonic() + timeout_s
    while not await check():
        if time.monotonic() >= deadline:
            return False
        await asyncio.sleep(poll_s)
    return True


async def wait_until_formed(
    pool: asyncpg.Pool,
    episode_ids: Collection[uuid.UUID],
    *,
    timeout_s: float,
    poll_s: float = 0.1,
    tenant: str | None = None,
) -> None:
    """Return once every episode has a committed consolidation run; raise after the deadline,
    naming how many are still unformed. An event id is unique only within its tenant: with
    ``tenant``, only that tenant's runs count."""
    wanted = list(set(episode_ids))
    formed = 0

    async def all_formed() -> bool:
        nonlocal formed
        formed = await pool.fetchval(
            "SELECT count(DISTINCT episode_id) FROM consolidation_run "
            "WHERE episode_id = ANY($1) AND ($2::text IS NULL OR tenant = $2)",
            wanted,
            tenant,
        )
        return bool(formed >= len(wanted))

    if not await poll_until(all_formed, timeout_s=timeout_s, poll_s=poll_s):
        raise FormationTimeout(
            f"{len(wanted) - formed} of {len(wanted)} episodes not formed after {timeout_s}s; "
            "is `engram worker` running?"
        )


async def wait_for_watermarks(
    pool: asyncpg.Pool,
    positions: Collection[LogPosition],
    *,
    timeout_s: float,
    poll_s: float = 0.1,
) -> None:
    """Return once each project's formed watermark has reached the offset of every position in
    it (formed or parked: what the watermark promises); raise after the deadline naming the
    projects still behind. A project's watermark passes its offsets in order, so each
    project's highest offset is the one waited for."""
    highest: dict[tuple[str, str], int] = {}
    for at in positions:
        key = (at.tenant, at.project)
        highest[key] = max(at.offset, highest.get(key, -1))
    behind: list[str] = []

    async def all_through() -> bool:
        behind.clear()
        for (tenant, project), offset in sorted(highest.items()):
            async with reading(pool) as conn:  # the live generation's backlog
                mark = await watermark(conn, tenant=tenant, project=project)
            if not mark.formed_through(offset):
                behind.append(f"{tenant}/{project} (formed {mark.formed_offset}, want {offset})")
        return not behind

    if not await poll_until(all_through, timeout_s=timeout_s, poll_s=poll_s):
        raise FormationTimeout(
            f"not formed after {timeout_s}s: {', '.join(behind)}; is `engram worker` running?"
        )
