"""Whether a failed call may succeed later: the one answer every retry in the server asks.

A loop that retries asks this, never a list of classes of its own. The answer comes from the
error itself, by its root:

- an :class:`~engram.infra.errors.EngramFailure` says so in its ``retriable``;
- a Kafka error (``aiokafka.errors.KafkaError``, found under faust's ``ProducerSendError``
  wrapping) may succeed later unless it is about the record itself (too large, corrupt, an
  invalid timestamp: Kafka will never take *this record*) or this producer was fenced by a newer
  one. aiokafka's own ``retriable`` flag is not used: it marks what the client retries inside one
  request, and is ``False`` for ``KafkaTimeoutError`` and ``BrokerNotAvailableError`` — exactly
  a broker that is down, which Engram's loops wait out;
- the database is *unavailable* (:data:`UNAVAILABLE`: refused, reset, unreachable, timed out,
  shutting down, out of connections), or PostgreSQL rolled a transaction back for a conflict
  with another (a serialization failure, a deadlock): the same call may succeed when run again;
- anything else (a bug, a refused request, bad input) fails the same way every time: never
  retried blind.
"""

from __future__ import annotations

import asyncpg
from aiokafka.errors import (
    CorruptRecordException,
    InvalidTimestampError,
    KafkaError,
    MessageSizeTooLargeError,
    ProducerFenced,
    RecordListTooLargeError,
    RecordTooLargeError,
)

from engram.infra.errors import EngramFailure

UNAVAILABLE: tuple[type[Exception], ...] = (
    OSError,  # refused, reset, unreachable, timed out (TimeoutError is an OSError)
    asyncpg.PostgresConnectionError,  # the connection was lost or rejected
    asyncpg.exceptions.OperatorInterventionError,  # shutting down, starting up, crashed
    asyncpg.exceptions.InsufficientResourcesError,  # too many connections, out of disk
)
"""The database (or the network under it) cannot be reached or is not serving right now."""

CONFLICTED: tuple[type[Exception], ...] = (asyncpg.exceptions.TransactionRollbackError,)
"""PostgreSQL rolled the transaction back for a conflict with another transaction."""

RECORD_TOO_LARGE: tuple[type[KafkaError], ...] = (
    MessageSizeTooLargeError,  # the producer's max_request_size, or the broker's (code 10)
    RecordTooLargeError,
    RecordListTooLargeError,  # code 18
)
RECORD_INVALID: tuple[type[KafkaError], ...] = (CorruptRecordException, InvalidTimestampError)
KAFKA_FOR_GOOD: tuple[type[KafkaError], ...] = (
    *RECORD_TOO_LARGE,
    *RECORD_INVALID,
    ProducerFenced,  # a newer producer with the same transactional id took over
)
"""Kafka errors that the same call meets again however long it waits."""


def retriable(error: BaseException) -> bool:
    """Whether the same call may succeed later (the module docstring says how it is decided)."""
    if isinstance(error, EngramFailure):
        return error.retriable
    kafka = kafka_cause(error)
    if isinstance(kafka, KafkaError):
        return not isinstance(kafka, KAFKA_FOR_GOOD)
    return isinstance(error, UNAVAILABLE + CONFLICTED)


def database_unavailable(error: BaseException) -> bool:
    """Whether ``error`` says the database cannot be reached or is not serving right now."""
    return isinstance(error, UNAVAILABLE)


def unavailable_cause(error: BaseException) -> BaseException | None:
    """The first :data:`UNAVAILABLE` error that ``error`` was raised while handling, if any."""
    cause = error.__context__
    while cause is not None and not isinstance(cause, UNAVAILABLE):
        cause = cause.__context__
    return cause


def kafka_cause(error: BaseException) -> BaseException:
    """The client's own error under faust's ``ProducerSendError`` wrapping (or ``error``)."""
    seen = error
    while not isinstance(seen, KafkaError) and seen.__cause__ is not None:
        seen = seen.__cause__
    return seen if isinstance(seen, KafkaError) else error
