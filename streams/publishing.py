"""Publishing formation's records to Kafka, with every failure classified.

A failed publish is one of three things (:mod:`infra.retriable` decides which):

- **retriable**: the broker is unreachable, restarting or electing a leader, a request or a
  queued batch timed out, a send found the producer's buffer full, authorisation is missing
  (``KafkaTimeoutError``, ``KafkaConnectionError``, ``NotLeaderForPartitionError``, …). Nothing
  is wrong with the record: it is sent again after a capped exponential backoff
  (:func:`infra.retry.retry`), counted in ``engram_publish_retries`` and logged, for as long as
  it takes; the worker's readiness reports the stall within
  ``ENGRAM_WORKER_PUBLISH_STALL_AFTER_S``. Dead-lettering every episode for a misconfiguration
  would lose them.
- **rejected**: Kafka will never take *this record* (larger than the producer's
  ``max_request_size`` or the topic's ``max.message.bytes``, an invalid or corrupt record).
  Retrying cannot help and waiting would strand every later episode of the partition, so the
  caller dead-letters the episode with the reason and moves on (:class:`RecordRejected`).
- anything else (not Kafka's answer: a bug; a fenced producer) propagates.

faust's producer wraps the client's errors in ``ProducerSendError``; the classification looks
through that wrapping at the cause.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from functools import partial
from typing import Any

import structlog

from engram.infra.backoff import Backoff
from engram.infra.errors import EngramFailure
from engram.infra.metrics import PUBLISH_RETRIES
from engram.infra.retriable import RECORD_INVALID, RECORD_TOO_LARGE, kafka_cause
from engram.infra.retry import Retrying, retry

log = structlog.get_logger(__name__)

Send = Callable[..., Awaitable[Any]]


class RecordRejected(EngramFailure):
    """Kafka will never accept this record; ``too_large`` says whether size was the reason."""

    code = "record_rejected"

    def __init__(self, cause: BaseException):
        super().__init__(f"{type(cause).__name__}: {cause}")
        self.cause = cause
        self.too_large = isinstance(cause, RECORD_TOO_LARGE)


def rejects_record(error: BaseException) -> bool:
    """Whether Kafka refuses this record for good (so it must be dead-lettered, not retried)."""
    return isinstance(kafka_cause(error), RECORD_TOO_LARGE + RECORD_INVALID)


def raise_if_rejected(error: BaseException) -> None:
    """Raise :class:`RecordRejected` for an error by which Kafka refuses the record for good.

    A function called in an ``except`` block, not a context manager: it runs on every publish,
    and a generator-based context manager cost ~6 µs a call there (``send_until_queued`` went
    from ~3 to ~14 µs on a loaded machine)."""
    if rejects_record(error):
        raise RecordRejected(kafka_cause(error)) from error


def count_retry(stream: str, failure: Retrying) -> None:
    """One retriable failure, on /metrics and in the log, naming what to check."""
    cause = kafka_cause(failure.error)
    PUBLISH_RETRIES.labels(stream, type(cause).__name__).inc()
    log.warning(
        "publish.retrying",
        stream=stream,
        error=type(cause).__name__,
        detail=str(cause)[:200],
        attempt=failure.failures,
        retry_in_s=failure.wait_s,
        fix="check that Kafka is running and that ENGRAM_KAFKA_BOOTSTRAP reaches it",
    )


async def send_until_queued(
    send: Send,
    *,
    stream: str,
    backoff: Backoff,
    sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
    **record: Any,
) -> asyncio.Future[Any]:
    """Hand one record to the producer, retrying what Kafka may accept later; returns the
    future of Kafka's acknowledgement. Raises :class:`RecordRejected` for a record Kafka will
    never take. Nothing is queued by a failed call, so retrying here keeps the caller's order.
    """

    async def queue() -> asyncio.Future[Any]:
        try:
            sent: asyncio.Future[Any] = await send(**record)
        except Exception as error:
            raise_if_rejected(error)
            raise
        return sent

    return await retry(queue, backoff=backoff, on_retry=partial(count_retry, stream), sleep=sleep)


async def acknowledged(sent: asyncio.Future[Any]) -> Any:
    """Kafka's acknowledgement of a queued record; :class:`RecordRejected` when Kafka refused
    the record for good, its error when it failed otherwise."""
    try:
        return await sent
    except Exception as error:
        raise_if_rejected(error)
        raise
