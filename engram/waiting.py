"""Waiting for formation on a condition with a deadline: how callers synchronise, not sleeps."""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import Collection

import asyncpg


class FormationTimeout(TimeoutError):
    pass


async def wait_until_formed(
    pool: asyncpg.Pool, episode_ids: Collection[uuid.UUID], *, timeout_s: float, poll_s: float = 0.1
) -> None:
    """Return once every episode has a committed consolidation run; raise after the deadline,
    naming how many are still unformed."""
    wanted = list(set(episode_ids))
    deadline = time.monotonic() + timeout_s
    while True:
        formed = await pool.fetchval(
            "SELECT count(DISTINCT episode_id) FROM consolidation_run WHERE episode_id = ANY($1)",
            wanted,
        )
        if formed >= len(wanted):
            return
        if time.monotonic() >= deadline:
            raise FormationTimeout(
                f"{len(wanted) - formed} of {len(wanted)} episodes not formed after {timeout_s}s; "
                "is `engram worker` running?"
            )
        await asyncio.sleep(poll_s)
