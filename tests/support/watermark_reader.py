"""A reader that checks, throughout a run, that formed watermarks are honest: whenever a
project's watermark says "formed through offset N", every episode of that project at or below N
has its consolidation run committed and readable."""

from __future__ import annotations

import asyncio
import contextlib
import uuid
from dataclasses import dataclass, field

import asyncpg

from engram.generations.reading import reading
from engram.watermarks.backlog import watermark


@dataclass
class WatermarkReader:
    pool: asyncpg.Pool
    tenant: str
    projects: dict[str, list[tuple[int, uuid.UUID]]]
    """Per project, its episodes' (offset, id) in log order."""
    checks: int = 0
    violations: list[str] = field(default_factory=list)
    _stop: asyncio.Event = field(default_factory=asyncio.Event)

    async def run(self, *, poll_s: float = 0.2) -> None:
        """Check every project in turn until stopped; PostgreSQL stays up in these tests."""
        while not self._stop.is_set():
            for project, episodes in self.projects.items():
                await self._check(project, episodes)
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._stop.wait(), timeout=poll_s)

    def stop(self) -> None:
        self._stop.set()

    async def _check(self, project: str, episodes: list[tuple[int, uuid.UUID]]) -> None:
        async with reading(self.pool) as conn:  # the watermark first, then what it promises
            mark = await watermark(conn, tenant=self.tenant, project=project)
        if mark.formed_offset is None:
            return
        promised = [eid for offset, eid in episodes if offset <= mark.formed_offset]
        async with reading(self.pool) as conn:
            readable = await conn.fetchval(
                "SELECT count(DISTINCT episode_id) FROM consolidation_run "
                "WHERE episode_id = ANY($1)",
                promised,
            )
        self.checks += 1
        if readable != len(promised):
            self.violations.append(
                f"{project}: formed through {mark.formed_offset} but only {readable} of "
                f"{len(promised)} episodes at or below it are projected"
            )
