"""Publish failures are classified: what Kafka may take later is retried with backoff and
counted; what it will never take is rejected at once; anything that is not Kafka's answer is a
bug and propagates."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from aiokafka.errors import (
    KafkaConnectionError,
    KafkaTimeoutError,
    MessageSizeTooLargeError,
    NotLeaderForPartitionError,
    RecordListTooLargeError,
    RequestTimedOutError,
)
from faust.exceptions import ProducerSendError

from engram.infra.backoff import Backoff
from engram.infra.metrics import PUBLISH_RETRIES
from engram.streams.publishing import RecordRejected, rejects_record, send_until_queued

BACKOFF = Backoff(first_s=0.5, max_s=4.0)


def _wrapped(error: Exception) -> ProducerSendError:
    """As faust's producer raises it: the client's error as the cause."""
    try:
        raise ProducerSendError(f"Error while sending: {error!r}") from error
    except ProducerSendError as wrapped:
        return wrapped


class _Producer:
    def __init__(self, *failures: Exception):
        self.failures = list(failures)
        self.calls: list[dict[str, Any]] = []

    async def send(self, **record: Any) -> asyncio.Future[Any]:
        self.calls.append(record)
        if self.failures:
            raise self.failures.pop(0)
        done: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        done.set_result("acknowledged")
        return done


def test_the_backoff_doubles_and_is_capped() -> None:
    assert [BACKOFF.after(n) for n in range(1, 6)] == [0.5, 1.0, 2.0, 4.0, 4.0]


@pytest.mark.parametrize(
    "error",
    [MessageSizeTooLargeError(), RecordListTooLargeError(), _wrapped(MessageSizeTooLargeError())],
)
def test_a_record_too_large_is_rejected_for_good(error: Exception) -> None:
    assert rejects_record(error)


@pytest.mark.parametrize(
    "error",
    [
        KafkaTimeoutError(),
        NotLeaderForPartitionError(),
        RequestTimedOutError(),
        KafkaConnectionError(),
    ],
)
def test_an_unavailable_broker_is_not_the_records_fault(error: Exception) -> None:
    assert not rejects_record(error)
    assert not rejects_record(_wrapped(error))


async def test_retriable_failures_are_retried_with_backoff_and_counted() -> None:
    producer = _Producer(_wrapped(KafkaTimeoutError()), NotLeaderForPartitionError())
    waits: list[float] = []

    async def sleep(seconds: float) -> None:
        waits.append(seconds)

    before = PUBLISH_RETRIES.labels("claims", "KafkaTimeoutError")._value.get()
    sent = await send_until_queued(
        producer.send, stream="claims", backoff=BACKOFF, sleep=sleep, key=b"k", value=b"v"
    )
    assert await sent == "acknowledged"
    assert waits == [0.5, 1.0]
    assert len(producer.calls) == 3 and producer.calls[-1] == {"key": b"k", "value": b"v"}
    assert PUBLISH_RETRIES.labels("claims", "KafkaTimeoutError")._value.get() == before + 1


async def test_a_rejected_record_is_not_retried() -> None:
    producer = _Producer(_wrapped(MessageSizeTooLargeError("9000 bytes")))
    with pytest.raises(RecordRejected) as rejected:
        await send_until_queued(producer.send, stream="claims", backoff=BACKOFF, value=b"v")
    assert rejected.value.too_large and len(producer.calls) == 1


async def test_an_error_that_is_not_kafkas_answer_propagates() -> None:
    producer = _Producer(TypeError("bad call"))
    with pytest.raises(TypeError):
        await send_until_queued(producer.send, stream="claims", backoff=BACKOFF, value=b"v")
