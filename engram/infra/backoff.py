"""How long every retry in the server waits: capped exponential back-off.

The loops that retry (all of them calls of :func:`infra.retry.retry`) differ in what they retry
and when they give up, not in how they wait: the first failure waits ``first_s``, each further
one doubles it, never past ``max_s``. Keeping the schedule here means a change to how Engram
backs off is one change, and a test of the schedule covers every loop.

``engram.client`` keeps its own loop (its import contract allows only ``schemas``, so an agent
runtime can install it without the server); it waits by the same doubling, from one second.
"""

from __future__ import annotations

import asyncio
import contextlib
import math
from dataclasses import dataclass


@dataclass(frozen=True)
class Backoff:
    """Capped exponential back-off: ``first_s`` after the first failure, doubling after each
    further one, at most ``max_s`` (no cap by default: the caller bounds the attempts)."""

    first_s: float
    max_s: float = math.inf

    def after(self, failures: int) -> float:
        """The wait after the ``failures``-th consecutive failure (1 for the first)."""
        return float(min(self.first_s * 2 ** max(failures - 1, 0), self.max_s))


async def pause_unless(stopping: asyncio.Event, seconds: float) -> None:
    """Wait ``seconds`` (a back-off, a poll), but no longer than until ``stopping`` is set: a
    stage asked to stop does not sit out its pause first."""
    with contextlib.suppress(TimeoutError):
        await asyncio.wait_for(stopping.wait(), timeout=seconds)
