"""What a receiver's answer means, and when a failed delivery is tried again."""

from __future__ import annotations

import random

import pytest
from pydantic import ValidationError

from engram.infra.settings import WebhooksSettings
from engram.notifications.outcomes import JITTER, RetrySchedule, status_failure


@pytest.mark.parametrize("status", [200, 201, 202, 204, 299])
def test_a_2xx_is_delivered(status: int) -> None:
    assert status_failure(status) is None


@pytest.mark.parametrize("status", [408, 429, 500, 502, 503, 504])
def test_408_429_and_5xx_are_retried(status: int) -> None:
    failure = status_failure(status)
    assert failure is not None and not failure.final


@pytest.mark.parametrize("status", [400, 401, 403, 404, 410, 413, 422, 301, 302, 307])
def test_other_4xx_and_redirects_are_final(status: int) -> None:
    failure = status_failure(status)
    assert failure is not None and failure.final


def test_the_wait_doubles_from_five_seconds_with_at_most_a_quarter_of_jitter() -> None:
    schedule = RetrySchedule(WebhooksSettings(), random.Random(7))
    for attempt, floor in enumerate([5, 10, 20, 40, 80, 160, 320], start=1):
        wait = schedule.retry_in(attempt)
        assert wait is not None and floor <= wait <= floor * (1 + JITTER)
    assert schedule.retry_in(8) is None  # eight attempts by default: parked


def test_the_cap_holds_and_the_seeds_six_attempts_from_five_seconds_are_a_floor() -> None:
    schedule = RetrySchedule(WebhooksSettings(retry_max_s=30, max_attempts=10), random.Random(1))
    waits = [schedule.retry_in(n) for n in range(1, 10)]
    assert all(w is not None and w <= 30 * (1 + JITTER) for w in waits)
    with pytest.raises(ValidationError):
        WebhooksSettings(max_attempts=5)
    with pytest.raises(ValidationError):
        WebhooksSettings(retry_after_s=1)
    with pytest.raises(ValidationError, match="LEASE_S"):
        WebhooksSettings(lease_s=5, timeout_s=10)
