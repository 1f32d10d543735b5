"""The client's retries: 503 and 429 are retried after Retry-After, a bounded number of times;
other errors raise at once with the server's detail."""

from __future__ import annotations

import itertools
import time

import httpx
import pytest

from engram.client import AsyncEngram, EngramError

FRESH = {
    "tenant": "t",
    "project": "p",
    "log_offset": None,
    "formed_offset": None,
    "lag_episodes": 0,
    "lag_seconds": 0.0,
    "parked": 0,
    "policy_version": None,
}


def _server(statuses: list[int], seen: list[float]) -> httpx.MockTransport:
    answers = iter(statuses)

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(time.monotonic())
        status = next(answers)
        body = FRESH if status == 200 else {"detail": f"said {status}"}
        return httpx.Response(status, json=body, headers={"Retry-After": "0.05"})

    return httpx.MockTransport(handler)


async def test_a_503_and_a_429_are_retried_after_the_servers_retry_after() -> None:
    seen: list[float] = []
    async with AsyncEngram("http://engram", transport=_server([503, 429, 200], seen)) as engram:
        fresh = await engram.freshness("p")
    assert fresh.project == "p" and len(seen) == 3
    assert min(b - a for a, b in itertools.pairwise(seen)) >= 0.05


async def test_retries_are_bounded_and_then_the_last_answer_raises() -> None:
    seen: list[float] = []
    transport = _server([503, 503, 503], seen)
    async with AsyncEngram("http://engram", transport=transport, retries=2) as engram:
        with pytest.raises(EngramError) as failed:
            await engram.freshness("p")
    assert failed.value.status == 503 and len(seen) == 3


async def test_a_404_is_not_retried_and_carries_the_detail() -> None:
    seen: list[float] = []
    async with AsyncEngram("http://engram", transport=_server([404], seen)) as engram:
        with pytest.raises(EngramError) as failed:
            await engram.freshness("p")
    assert (failed.value.status, failed.value.detail, len(seen)) == (404, "said 404", 1)
