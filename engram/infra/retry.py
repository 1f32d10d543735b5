"""The one way Engram's server retries a call.

Every loop that tries something again — waiting for the database, publishing to Kafka, a
formation attempt, a model call, an embeddings request, the inbox's Kafka session — is a call
of :func:`retry`. It decides nothing of its own:

- *whether* a failure is worth another try is :func:`infra.retriable.retriable`'s answer, asked
  of the error; a caller may narrow it (``only``: the database loop waits out the database and
  lets everything else propagate) but never widen it;
- *how long* to wait is :class:`infra.backoff.Backoff`'s schedule;
- *when to give up* is ``attempts`` (all of them, those made before this call included:
  formation keeps its count in the backlog across restarts); without it, never while the failures
  are retriable.

A failure that is not retried propagates as it was raised. Cancellation is never caught, so
shutdown still ends a wait. ``on_retry`` hears each failure that will be retried (the loop's log
line, metric or audit row); ``sleep`` is how the wait is spent (the tests' clock, or a wait that
ends early when a stage stops).

``engram.client`` keeps its own loop: its import contract allows only ``schemas``, so that an
agent runtime can install it without the server.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TypeVar

from engram.infra.backoff import Backoff
from engram.infra.retriable import retriable

T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class Retrying:
    """A failure that will be retried: the error, the failures so far (those counted before
    this call included) and the wait before the next attempt."""

    error: Exception
    failures: int
    wait_s: float


OnRetry = Callable[[Retrying], Awaitable[None] | None]


async def retry(
    operation: Callable[[], Awaitable[T]],
    *,
    backoff: Backoff,
    attempts: int | None = None,
    failed_before: int = 0,
    only: Callable[[Exception], bool] | None = None,
    on_retry: OnRetry | None = None,
    sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
) -> T:
    """What ``operation`` returns once it succeeds; the module docstring says when it gives up.

    Only for operations that are safe to repeat: an idempotent write, a read, a whole
    transaction (an error inside one rolled it back)."""
    failures = failed_before
    while True:
        try:
            return await operation()
        except Exception as error:
            failures += 1
            if not _worth_another(error, only) or (attempts is not None and failures >= attempts):
                raise
            wait = backoff.after(failures)
            if on_retry is not None:
                heard = on_retry(Retrying(error, failures, wait))
                if heard is not None:
                    await heard
            await sleep(wait)


def _worth_another(error: Exception, only: Callable[[Exception], bool] | None) -> bool:
    return retriable(error) and (only is None or only(error))
