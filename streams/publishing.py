"""Publishing formation's records to Kafka, with every failure classified.

A failed publish is one of two things:

- **retriable**: the broker is unreachable, restarting or electing a leader, a request or a
  queued batch timed out, a send found the producer's buffer full (``KafkaTimeoutError``,
  ``KafkaConnectionError``, ``NotLeaderForPartitionError``, ``RequestTimedOutError``, …).
  Nothing is wrong with the record: it is sent again after a capped exponential backoff,
  counted in ``engram_publish_retries`` and logged, for as long as it takes.
- **rejected**: Kafka will never take *this record* (larger than the producer's
  ``max_request_size`` or the topic's ``max.message.bytes``, an invalid or corrupt record).
  Retrying cannot help and waiting would strand every later episode of the partition, so the
  caller dead-letters the episode with the reason and moves on (:class:`RecordRejected`).

Anything else Kafka reports (authorisation, a fenced producer) is retried too: it is not the
record's fault, dead-lettering every episode for a misconfiguration would lose them, and the
worker's readiness reports the stall within ``ENGRAM_WORKER_PUBLISH_STALL_AFTER_S``.

faust's producer wraps the client's errors in ``ProducerSendError``; the classification looks
through that wrapping at the cause.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

import structlog
from aiokafka.errors import (
    CorruptRecordException,
    InvalidTimestampError,
    KafkaError,
    MessageSizeTooLargeError,
    RecordListTooLargeError,
    RecordTooLargeError,
)

from engram.infra.backoff import Backoff
from engram.infra.errors import EngramFailure
from engram.infra.metrics import PUBLISH_RETRIES

log = structlog.get_logger(__name__)

Send = Callable[..., Awaitable[Any]]

_TOO_LARGE: tuple[type[BaseException], ...] = (
    MessageSizeTooLargeError,  # the producer's max_request_size, or the broker's (code 10)
    RecordTooLargeError,
    RecordListTooLargeError,  # code 18
)
_INVALID: tuple[type[BaseException], ...] = (CorruptRecordException, InvalidTimestampError)


class RecordRejected(EngramFailure):
    """Kafka will never accept this record; ``too_large`` says whether size was the reason."""

    code = "record_rejected"

    def __init__(self, cause: BaseException):
        super().__init__(f"{type(cause).__name__}: {cause}")
        self.cause = cause
        self.too_large = isinstance(cause, _TOO_LARGE)


def kafka_cause(error: BaseException) -> BaseException:
    """The client's own error under faust's ``ProducerSendError`` wrapping (or ``error``)."""
    seen = error
    while not isinstance(seen, KafkaError) and seen.__cause__ is not None:
        seen = seen.__cause__
    return seen if isinstance(seen, KafkaError) else error


def rejects_record(error: BaseException) -> bool:
    """Whether Kafka refuses this record for good (so it must be dead-lettered, not retried)."""
    return isinstance(kafka_cause(error), _TOO_LARGE + _INVALID)


def count_retry(stream: str, error: BaseException, attempt: int, wait_s: float) -> None:
    """One retriable failure, on /metrics and in the log, naming what to check."""
    cause = kafka_cause(error)
    PUBLISH_RETRIES.labels(stream, type(cause).__name__).inc()
    log.warning(
        "publish.retrying",
        stream=stream,
        error=type(cause).__name__,
        detail=str(cause)[:200],
        attempt=attempt,
        retry_in_s=wait_s,
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
    failures = 0
    while True:
        try:
            sent: asyncio.Future[Any] = await send(**record)
            return sent
        except asyncio.CancelledError:
            raise
        except Exception as error:
            if rejects_record(error):
                raise RecordRejected(kafka_cause(error)) from error
            if not isinstance(kafka_cause(error), KafkaError):
                raise  # not Kafka's answer: a bug, never retried blind
            failures += 1
            wait = backoff.after(failures)
            count_retry(stream, error, failures, wait)
            await sleep(wait)
