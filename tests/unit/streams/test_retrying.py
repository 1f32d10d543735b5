"""A failing attempt is retried with doubling waits, then parked; never silently dropped."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable

import pytest

from engram.formation import deterministic
from engram.formation.policy import FormationPolicy
from engram.infra.errors import EngramFailure
from engram.schemas.claims import SourcePosition
from engram.streams.formation_stage import FormationStage
from engram.streams.retrying import (
    Parked,
    RetryPolicy,
    Succeeded,
    attempt_until_parked,
    failure_kind,
)
from tests.support.forming import episode as episode_of


class ModelDown(EngramFailure):
    code = "test_model_down"
    retriable = True
    exit_code = 1
    kind = "http_status"


def _recorder() -> tuple[list[tuple[str, bool]], Callable[[str, bool], Awaitable[int]]]:
    failures: list[tuple[str, bool]] = []

    async def record(kind: str, park: bool) -> int:
        failures.append((kind, park))
        return len(failures)

    return failures, record


async def test_failures_back_off_doubling_and_park_after_the_last_attempt() -> None:
    failures, record = _recorder()
    waits: list[float] = []

    async def sleep(seconds: float) -> None:
        waits.append(seconds)

    async def attempt() -> str:
        raise ModelDown()

    outcome = await attempt_until_parked(
        attempt,
        policy=RetryPolicy(6, 10, 60),
        failed_before=0,
        record_failure=record,
        sleep=sleep,
    )
    assert outcome == Parked(6, "http_status")
    assert waits == [10, 20, 40, 80, 160]
    assert [park for _, park in failures] == [False] * 5 + [True]


async def test_a_success_after_failures_is_returned_with_its_attempt_count() -> None:
    _failures, record = _recorder()
    calls = 0

    async def attempt() -> str:
        nonlocal calls
        calls += 1
        if calls < 3:
            raise ModelDown()
        return "batch"

    async def no_wait(_: float) -> None:
        return None

    outcome = await attempt_until_parked(
        attempt,
        policy=RetryPolicy(6, 10, 60),
        failed_before=0,
        record_failure=record,
        sleep=no_wait,
    )
    assert outcome == Succeeded("batch", 3)


async def test_attempts_before_a_restart_count_towards_parking() -> None:
    failures, record = _recorder()

    async def attempt() -> str:
        raise ModelDown()

    async def no_wait(_: float) -> None:
        return None

    outcome = await attempt_until_parked(
        attempt,
        policy=RetryPolicy(6, 10, 60),
        failed_before=5,
        record_failure=record,
        sleep=no_wait,
    )
    assert isinstance(outcome, Parked) and failures == [("http_status", True)]


async def test_the_turn_budget_bounds_an_attempt() -> None:
    _failures, record = _recorder()

    async def attempt() -> str:
        await asyncio.Event().wait()
        return "never"

    outcome = await attempt_until_parked(
        attempt,
        policy=RetryPolicy(1, 10, 0.01),
        failed_before=0,
        record_failure=record,
    )
    assert outcome == Parked(1, "turn_budget")


async def test_shutdown_during_an_attempt_is_not_counted() -> None:
    failures, record = _recorder()
    started = asyncio.Event()

    async def attempt() -> str:
        started.set()
        await asyncio.Event().wait()
        return "never"

    task = asyncio.create_task(
        attempt_until_parked(
            attempt,
            policy=RetryPolicy(6, 10, 60),
            failed_before=0,
            record_failure=record,
        )
    )
    await started.wait()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert failures == []


async def test_a_failure_that_does_not_say_it_is_retriable_parks_at_once() -> None:
    """A bug fails the same way every time: what is retriable is the error's to say
    (:mod:`infra.retriable`), and an error that does not say so is not retried blind."""
    failures, record = _recorder()
    waits: list[float] = []

    async def sleep(seconds: float) -> None:
        waits.append(seconds)

    async def attempt() -> str:
        raise KeyError("a bug")

    outcome = await attempt_until_parked(
        attempt, policy=RetryPolicy(6, 10, 60), failed_before=0, record_failure=record, sleep=sleep
    )
    assert outcome == Parked(1, "KeyError")
    assert failures == [("KeyError", True)] and waits == []


def test_failure_kinds_name_no_content() -> None:
    assert failure_kind(ModelDown("secret text")) == "http_status"
    assert failure_kind(TimeoutError()) == "turn_budget"
    assert failure_kind(ValueError("message content")) == "ValueError"


async def test_the_budget_cannot_interrupt_an_attempt_that_never_suspends() -> None:
    """Why the deterministic stage runs without the timer: cancellation only lands at a
    suspension point, so an attempt of pure CPU finishes past its budget either way."""
    _failures, record = _recorder()

    async def attempt() -> str:
        spin_until = time.perf_counter() + 0.02
        while time.perf_counter() < spin_until:
            pass
        return "formed"

    for waits in (True, False):
        outcome = await attempt_until_parked(
            attempt,
            policy=RetryPolicy(1, 10, 0.001),
            failed_before=0,
            record_failure=record,
            waits=waits,
        )
        assert outcome == Succeeded("formed", 1)


async def test_a_failure_of_the_core_parks_at_once_without_waiting() -> None:
    """A bug in the pure core fails the same way every time: no back-off holding the lane."""
    failures, record = _recorder()
    waits: list[float] = []

    async def sleep(seconds: float) -> None:
        waits.append(seconds)

    stage = FormationStage(FormationPolicy())
    episode = episode_of("I live in Lisbon.")
    source = SourcePosition(topic="t", partition=0, offset=0)

    def broken(*args: object, **kwargs: object) -> list[object]:
        raise IndexError("the core met something it did not expect")

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(deterministic, "propose", broken)
        outcome = await attempt_until_parked(
            lambda: stage.form(episode, source),
            policy=RetryPolicy(6, 10, 60),
            failed_before=0,
            record_failure=record,
            sleep=sleep,
            waits=False,
        )
    assert outcome == Parked(1, "core_error")
    assert failures == [("core_error", True)] and waits == []
