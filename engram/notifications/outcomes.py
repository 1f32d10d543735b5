"""What an attempt's result means, and when to try again: pure.

- 2xx: delivered.
- 408 and 429 (the receiver asks for time), 5xx, a timeout, a connection that failed or a host
  that did not resolve: retried, after a wait that doubles from ``retry_after_s`` (capped at
  ``retry_max_s``) with up to a quarter more added at random, so endpoints that failed together
  are not all tried again in the same second; parked once ``max_attempts`` are spent.
- Any other 4xx (the receiver refuses the request as such: 400, 401, 404, 410 …) and any 3xx
  (redirects are never followed: a redirect could lead to an address the checks refused):
  parked at once.
- A destination refused at send time (its host now resolves to a private address): parked at
  once, and the endpoint disabled with the reason.
"""

from __future__ import annotations

import random

from engram.infra.backoff import Backoff
from engram.infra.settings import WebhooksSettings
from engram.notifications.queue import Failure

JITTER = 0.25
"""At most this fraction of the wait is added at random."""


def status_failure(status: int) -> Failure | None:
    """None for a 2xx; otherwise the failure the status means."""
    if 200 <= status < 300:
        return None
    if status in (408, 429) or status >= 500 or status < 200:
        return Failure(status, f"HTTP {status}", final=False)
    if 300 <= status < 400:
        return Failure(status, f"HTTP {status}: redirects are not followed", final=True)
    return Failure(status, f"HTTP {status}", final=True)


class RetrySchedule:
    """When a failed delivery is due again, from the settings (the seed's six attempts from
    five seconds is the settings' floor)."""

    def __init__(self, settings: WebhooksSettings, rng: random.Random | None = None) -> None:
        self._backoff = Backoff(settings.retry_after_s, settings.retry_max_s)
        self._max_attempts = settings.max_attempts
        self._rng = rng or random.Random()

    def retry_in(self, attempts: int) -> float | None:
        """The wait after the ``attempts``-th failed attempt; None once attempts are spent."""
        if attempts >= self._max_attempts:
            return None
        wait = self._backoff.after(attempts)
        return wait + wait * JITTER * self._rng.random()
