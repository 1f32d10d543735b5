"""Retrying a formation attempt with exponential backoff, then parking it.

A model error or a blown turn budget is retried after ``retry_after``, doubling each time
(:func:`infra.retry.retry`); after ``max_attempts`` failed attempts the episode is parked so the
watermark can move past it. A failure that is not retriable (:mod:`infra.retriable`: a failure of
the pure core or a bug fails the same way every time) parks the episode at its first failure.
Attempts are counted in the backlog, so a restart does not reset them, and a cancelled attempt
(shutdown) is never counted.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Generic, TypeVar

from engram.infra.backoff import Backoff
from engram.infra.retry import Retrying, retry

T = TypeVar("T")


@dataclass(frozen=True)
class RetryPolicy:
    max_attempts: int
    retry_after_s: float
    turn_budget_s: float

    @property
    def backoff(self) -> Backoff:
        """The waits between attempts: retry_after, doubling each time."""
        return Backoff(self.retry_after_s)


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

    async def budgeted() -> T:
        if not waits:
            return await attempt()
        async with asyncio.timeout(policy.turn_budget_s):
            return await attempt()

    async def retrying(failure: Retrying) -> None:
        nonlocal failed
        failed = await record_failure(failure_kind(failure.error), False)

    try:
        value = await retry(
            budgeted,
            backoff=policy.backoff,
            attempts=policy.max_attempts,
            failed_before=failed_before,
            on_retry=retrying,
            sleep=sleep,
        )
    except Exception as error:  # not retriable, or the attempts are spent: parked, never dropped
        kind = failure_kind(error)
        return Parked(await record_failure(kind, True), kind)
    return Succeeded(value, failed + 1)
