"""Retrying a formation attempt with exponential backoff, then parking it.

A model error or a blown turn budget is retried after ``retry_after``, doubling each time;
after ``max_attempts`` failed attempts the episode is parked so the watermark can move past it.
An error that says it is not ``retriable`` (a failure of the pure core: the same content fails
the same way every time) parks the episode at its first failure.
Attempts are counted in the backlog, so a restart does not reset them, and a cancelled attempt
(shutdown) is never counted.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Generic, TypeVar

from engram.infra.backoff import Backoff

T = TypeVar("T")


@dataclass(frozen=True)
class RetryPolicy:
    max_attempts: int
    retry_after_s: float
    turn_budget_s: float

    def backoff(self, failed_attempts: int) -> float:
        """The wait after the n-th failed attempt: retry_after, doubling each time."""
        return Backoff(self.retry_after_s).after(failed_attempts)


@dataclass(frozen=True)
class Parked:
    attempts: int
    failure_kind: str


@dataclass(frozen=True)
class Succeeded(Generic[T]):
    value: T
    attempts: int


def failure_kind(error: BaseException) -> str:
    """A content-free name for why an attempt failed."""
    kind = getattr(error, "kind", None)
    if isinstance(kind, str):
        return kind
    if isinstance(error, TimeoutError):
        return "turn_budget"
    return type(error).__name__


async def attempt_until_parked(
    attempt: Callable[[], Awaitable[T]],
    *,
    policy: RetryPolicy,
    failed_before: int,
    record_failure: Callable[[str, bool], Awaitable[int]],
    sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
    waits: bool = True,
) -> Succeeded[T] | Parked:
    """Run ``attempt`` under the turn budget until it succeeds or the attempts are spent.

    ``record_failure(kind, park)`` persists one failed attempt and returns the count so far.
    ``waits=False`` says the attempt never suspends (the deterministic arm alone: CPU, no
    I/O). The budget is enforced by cancelling at a suspension point, so such an attempt cannot
    be interrupted by it; the timer is then not armed at all (a few per cent of the formation
    agent's own cost, each episode).
    """
    failed = failed_before
    while True:
        try:
            if waits:
                async with asyncio.timeout(policy.turn_budget_s):
                    value = await attempt()
            else:
                value = await attempt()
            return Succeeded(value, failed + 1)
        except asyncio.CancelledError:
            raise
        except Exception as error:  # every failure is retried, then parked: never dropped
            kind = failure_kind(error)
            park = failed + 1 >= policy.max_attempts or not getattr(error, "retriable", True)
            failed = await record_failure(kind, park)
            if park:
                return Parked(failed, kind)
            await sleep(policy.backoff(failed))
