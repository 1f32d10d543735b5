"""Waiting on a condition with a deadline: the one place tests poll, never a bare sleep."""

from __future__ import annotations

import asyncio
import inspect
import time
from collections.abc import Awaitable, Callable

Condition = Callable[[], bool | Awaitable[bool]]


async def wait_until(
    condition: Condition, *, timeout_s: float, what: str, poll_s: float = 0.05
) -> None:
    """Return as soon as ``condition()`` is true; fail naming ``what`` after ``timeout_s``."""
    deadline = time.monotonic() + timeout_s
    while True:
        result = condition()
        if inspect.isawaitable(result):
            result = await result
        if result:
            return
        assert time.monotonic() < deadline, f"{what}: not reached within {timeout_s}s"
        await asyncio.sleep(poll_s)


async def let_others_run(turns: int = 1) -> None:
    """Yield to the event loop ``turns`` times: lets tasks that are ready take their step.
    Not a wait for time to pass — for asserting that something has *not* happened."""
    for _ in range(turns):
        await asyncio.sleep(0)
