"""The client's retries: 503 and 429 are retried after Retry-After, a bounded number of times;
other errors raise at once with the server's detail. No answer at all is the client's own
retriable error, never a raw httpx one: against a port where nothing listens, for real."""

from __future__ import annotations

import itertools
import time
import uuid

import httpx
import pytest

from engram.client import AsyncEngram, Engram, EngramError, EngramUnreachable
from tests.support.http import free_port

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


async def test_an_api_that_is_not_there_raises_the_clients_own_retriable_error() -> None:
    port = free_port()  # bound and closed again: nothing listens there
    url = f"http://127.0.0.1:{port}"
    async with AsyncEngram(url, retries=2, max_retry_wait_s=0.05) as engram:
        started = time.monotonic()
        with pytest.raises(EngramUnreachable) as failed:
            await engram.freshness("p")
        waited = time.monotonic() - started
    error = failed.value
    assert isinstance(error, EngramError) and error.retriable and error.status is None
    assert isinstance(error.__cause__, httpx.ConnectError)
    assert f"at {url}" in str(error) and "is `engram api` running there?" in str(error)
    assert waited >= 0.1, "a refused connection is retried (twice here) like a 503"


def test_the_blocking_client_raises_the_same_error() -> None:
    with (
        Engram(f"http://127.0.0.1:{free_port()}", retries=0) as blocking,
        pytest.raises(EngramUnreachable) as failed,
    ):
        blocking.beliefs()
    assert failed.value.retriable and isinstance(failed.value.__cause__, httpx.ConnectError)


async def test_a_refused_connection_is_retried_and_an_error_after_sending_is_not() -> None:
    calls: list[str] = []

    def handler(request: httpx.Request) -> httpx.Response:
        calls.append(request.url.path)
        if len(calls) == 1:
            raise httpx.ConnectError("connection refused", request=request)
        if request.method == "POST":
            raise httpx.ReadTimeout("no answer", request=request)
        return httpx.Response(200, json=FRESH)

    transport = httpx.MockTransport(handler)
    async with AsyncEngram("http://engram", transport=transport, max_retry_wait_s=0.01) as engram:
        assert (await engram.freshness("p")).project == "p"
        assert len(calls) == 2
        with pytest.raises(EngramUnreachable) as failed:
            await engram.correct(uuid.uuid4(), "untrue")
    assert len(calls) == 3, "sent once: the server may have acted on it"
    assert failed.value.retriable and "may have been applied" in str(failed.value)
