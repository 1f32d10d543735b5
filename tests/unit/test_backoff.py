"""One back-off schedule: every retry of the server waits by :class:`infra.backoff.Backoff`,
so its shape is tested once here and each loop's own tests check only when it gives up."""

from __future__ import annotations

import asyncio
import math

import httpx
import pytest

from engram.client import _Requests
from engram.infra.backoff import Backoff, pause_unless
from engram.infra.db import DATABASE_BACKOFF
from engram.streams.model.attempts import RetrySchedule
from engram.streams.retrying import RetryPolicy


def test_the_first_failure_waits_first_s_and_each_further_one_doubles() -> None:
    assert [Backoff(0.25).after(n) for n in range(1, 6)] == [0.25, 0.5, 1.0, 2.0, 4.0]


def test_the_wait_never_passes_the_cap() -> None:
    waits = [Backoff(0.5, 30.0).after(n) for n in range(1, 40)]
    assert max(waits) == 30.0
    assert waits == sorted(waits), "never shorter than the wait before it"


def test_no_failure_yet_waits_as_the_first() -> None:
    assert Backoff(2.0).after(0) == 2.0


@pytest.mark.parametrize("failures", [1, 2, 3, 7])
def test_the_loops_wait_by_the_one_schedule(failures: int) -> None:
    formation = RetryPolicy(max_attempts=9, retry_after_s=1.5, turn_budget_s=30.0)
    assert formation.backoff.after(failures) == Backoff(1.5).after(failures)
    model = RetrySchedule(max_attempts=3, retry_after_s=0.2)
    assert model.backoff.after(failures) == Backoff(0.2).after(failures)
    assert DATABASE_BACKOFF.after(failures) == Backoff(0.5, 30.0).after(failures)
    assert DATABASE_BACKOFF.max_s < math.inf, "the database is waited for indefinitely: capped"


@pytest.mark.parametrize("attempt", [0, 1, 2, 3, 6])
def test_the_client_waits_by_the_same_doubling_without_importing_it(attempt: int) -> None:
    """``engram.client`` may not import ``infra`` (its import contract), so it keeps its own
    loop; without a ``Retry-After`` its waits are ``Backoff(1.0, max_retry_wait_s)``."""
    requests = _Requests(tenant=None, principal=None, retries=9, max_retry_wait_s=30.0)
    unavailable = httpx.Response(503)
    assert requests.wait_s(unavailable, attempt) == Backoff(1.0, 30.0).after(attempt + 1)


async def test_a_pause_ends_when_the_stage_is_asked_to_stop() -> None:
    stopping = asyncio.Event()
    pausing = asyncio.create_task(pause_unless(stopping, 3600))
    stopping.set()
    await asyncio.wait_for(pausing, timeout=10)  # an hour's pause, ended by the stop


async def test_a_pause_lasts_its_seconds_when_nothing_stops_it() -> None:
    stopping = asyncio.Event()
    await asyncio.wait_for(pause_unless(stopping, 0.01), timeout=10)
    assert not stopping.is_set()
