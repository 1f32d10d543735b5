"""The notifier's sender: claims due deliveries and attempts them until stopped.

It runs in ``engram worker`` (beside formation and the projector, on its own pool) or alone as
``engram notifier``, any number of them at once: claims are ``SKIP LOCKED`` leases
(:mod:`engram.notifications.queue`), so each delivery is attempted by one sender at a time. Each
pass also owes ``project.formed_through`` where a watermark moved (:mod:`.formed`), refreshes the
gauges (pending, lag, parked, disabled) and, hourly, deletes deliveries delivered longer ago than
``keep_delivered_days``. Up to ``concurrency`` attempts are in flight; an idle notifier looks
again every ``poll_s`` (or at once when woken by the sink in the same process).
"""

from __future__ import annotations

import asyncio
import contextlib
import time

import asyncpg
import structlog

from engram.infra.db import UNAVAILABLE, report_unavailable
from engram.infra.metrics import (
    WEBHOOK_ATTEMPTS,
    WEBHOOK_DISABLED,
    WEBHOOK_LAG,
    WEBHOOK_LATENCY,
    WEBHOOK_PARKED,
    WEBHOOK_PENDING,
)
from engram.infra.settings import WebhooksSettings
from engram.notifications.destinations import DestinationPolicy
from engram.notifications.formed import record_formed_through
from engram.notifications.outcomes import RetrySchedule
from engram.notifications.queue import (
    Claimed,
    claim,
    settle_delivered,
    settle_failed,
    sweep_delivered,
)
from engram.notifications.sending import Sender
from engram.notifications.transport import HttpTransport
from engram.notifications.vault import SecretVault

log = structlog.get_logger(__name__)

SWEEP_EVERY_S = 3600.0

_GAUGES = """
SELECT count(*) FILTER (WHERE d.state = 'pending')::int AS pending,
       count(*) FILTER (WHERE d.state = 'parked')::int AS parked,
       extract(epoch FROM now() - min(d.created_at) FILTER (WHERE d.state = 'pending'))
           AS lag_s,
       (SELECT count(*) FROM public.webhook_endpoint WHERE disabled_at IS NOT NULL)::int
           AS disabled
FROM public.webhook_delivery d
WHERE d.state <> 'delivered'
"""


class Notifier:
    """Sends what is owed until stopped; a stage (``infra.health.Stage``)."""

    def __init__(
        self,
        settings: WebhooksSettings,
        pool: asyncpg.Pool,
        vault: SecretVault,
        *,
        schedule: RetrySchedule | None = None,
    ) -> None:
        self._settings = settings
        self._pool = pool
        self._vault = vault
        self._schedule = schedule or RetrySchedule(settings)
        self._transport = HttpTransport(settings.timeout_s)
        self._sender = Sender(DestinationPolicy(settings), self._transport)
        self._stopping = asyncio.Event()
        self._wanted = asyncio.Event()
        self._in_flight: set[asyncio.Task[None]] = set()
        self._swept_at = 0.0
        self._passes = 0

    def stop(self) -> None:
        self._stopping.set()
        self._wanted.set()

    def wake(self) -> None:
        """Look for due deliveries now (the sink wrote some)."""
        self._wanted.set()

    def readiness(self) -> tuple[bool, str]:
        if self._passes == 0:
            return False, "no pass over the owed deliveries yet"
        return True, "ready"

    async def run(self) -> None:
        try:
            while not self._stopping.is_set():
                try:
                    await self._pass()
                except UNAVAILABLE as error:
                    report_unavailable("notifier.pass", error, self._settings.poll_s)
                except Exception:  # a bug: loud, and the next pass tries again
                    log.exception("notifier.pass_failed")
                await self._idle()
        finally:
            if self._in_flight:  # attempts under way finish; their leases are recorded
                await asyncio.gather(*self._in_flight, return_exceptions=True)
            await self._transport.close()

    async def _pass(self) -> None:
        await record_formed_through(self._pool)
        free = self._settings.concurrency - len(self._in_flight)
        if free > 0:
            for claimed in await claim(self._pool, limit=free, lease_s=self._settings.lease_s):
                task = asyncio.create_task(self._attempt(claimed))
                self._in_flight.add(task)
                task.add_done_callback(self._in_flight.discard)
        await self._gauges()
        if time.monotonic() - self._swept_at >= SWEEP_EVERY_S:
            await sweep_delivered(self._pool, keep_days=self._settings.keep_delivered_days)
            self._swept_at = time.monotonic()
        self._passes += 1

    async def _idle(self) -> None:
        """Until an attempt ends, the sink wakes us, we are stopped, or ``poll_s`` passes."""
        waits = [asyncio.ensure_future(self._wanted.wait()), *self._in_flight]
        with contextlib.suppress(TimeoutError):
            await asyncio.wait(
                waits, timeout=self._settings.poll_s, return_when=asyncio.FIRST_COMPLETED
            )
        waits[0].cancel()
        self._wanted.clear()

    async def _attempt(self, claimed: Claimed) -> None:
        started = time.perf_counter()
        try:
            outcome = await self.attempt(claimed)
        except UNAVAILABLE as error:  # the lease lapses; another pass sends it again
            report_unavailable("notifier.attempt", error, self._settings.poll_s)
            return
        except Exception:  # a bug: loud, and the notifier goes on with the others
            log.exception("notifier.attempt_failed", delivery=str(claimed.delivery_id))
            return
        WEBHOOK_LATENCY.observe(time.perf_counter() - started)
        WEBHOOK_ATTEMPTS.labels(outcome=outcome).inc()
        self._wanted.set()  # its endpoint's next delivery may be due now

    async def attempt(self, claimed: Claimed) -> str:
        """Send one claimed delivery and record what happened: ``delivered``, ``retried``,
        ``parked`` or ``lapsed``."""
        keys = await self._vault.signing_keys(
            self._pool, tenant=claimed.tenant, endpoint_id=claimed.endpoint_id
        )
        status, failure = await self._sender.send(
            url=claimed.url,
            message_id=claimed.delivery_id,
            body=claimed.payload.encode(),
            keys=keys,
        )
        if failure is None:
            assert status is not None
            return "delivered" if await settle_delivered(self._pool, claimed, status) else "lapsed"
        log.info(
            "notifier.attempt_failed_at_receiver",
            delivery=str(claimed.delivery_id),
            endpoint=str(claimed.endpoint_id),
            attempt=claimed.attempts,
            status=status,
            final=failure.final,
        )
        settings = self._settings
        return await settle_failed(
            self._pool,
            claimed,
            failure,
            retry_in_s=self._schedule.retry_in(claimed.attempts),
            disable_after_failures=settings.disable_after_failures,
            disable_after_s=settings.disable_after_s,
        )

    async def _gauges(self) -> None:
        row = await self._pool.fetchrow(_GAUGES)
        assert row is not None
        WEBHOOK_PENDING.set(row["pending"])
        WEBHOOK_PARKED.set(row["parked"])
        WEBHOOK_LAG.set(float(row["lag_s"] or 0.0))
        WEBHOOK_DISABLED.set(row["disabled"])
