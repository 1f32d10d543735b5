"""One way to retry: :func:`infra.retry.retry` decides nothing of its own — the error says
whether it is worth another try (:mod:`infra.retriable`), the back-off how long to wait, the
caller when to give up — and no loop of the server retries by hand."""

from __future__ import annotations

import ast
import asyncio
from pathlib import Path

import asyncpg
import pytest
from aiokafka.errors import (
    BrokerNotAvailableError,
    KafkaConnectionError,
    KafkaTimeoutError,
    MessageSizeTooLargeError,
    NotLeaderForPartitionError,
    ProducerFenced,
    TopicAuthorizationFailedError,
)
from faust.exceptions import ProducerSendError

from engram.infra.backoff import Backoff
from engram.infra.errors import EngramFailure
from engram.infra.retriable import retriable
from engram.infra.retry import Retrying, retry

REPO = Path(__file__).resolve().parents[2]


class Outage(EngramFailure):
    code = "test_outage"
    retriable = True
    exit_code = 1


class Refusal(EngramFailure):
    code = "test_refusal"


class Script:
    """Raises the given errors one call at a time, then answers; records the waits."""

    def __init__(self, *errors: Exception) -> None:
        self.errors = list(errors)
        self.calls = 0
        self.waits: list[float] = []

    async def __call__(self) -> str:
        self.calls += 1
        if self.errors:
            raise self.errors.pop(0)
        return "answered"

    async def sleep(self, seconds: float) -> None:
        self.waits.append(seconds)


def _wrapped(error: Exception) -> ProducerSendError:
    try:
        raise ProducerSendError(f"Error while sending: {error!r}") from error
    except ProducerSendError as wrapped:
        return wrapped


@pytest.mark.parametrize(
    "error",
    [
        Outage(),
        KafkaTimeoutError(),  # aiokafka says not retriable: it is a broker that is down
        BrokerNotAvailableError(),
        KafkaConnectionError(),
        NotLeaderForPartitionError(),
        TopicAuthorizationFailedError(),  # not the record's fault: waited out, reported stalled
        _wrapped(KafkaTimeoutError()),
        ConnectionRefusedError(),
        TimeoutError(),
        asyncpg.exceptions.AdminShutdownError("terminating connection"),
        asyncpg.exceptions.TooManyConnectionsError("too many clients"),
        asyncpg.exceptions.SerializationError("could not serialize access"),
        asyncpg.exceptions.DeadlockDetectedError("deadlock detected"),
    ],
    ids=lambda error: type(error).__name__,
)
def test_what_may_succeed_later_is_retriable(error: Exception) -> None:
    assert retriable(error)


@pytest.mark.parametrize(
    "error",
    [
        Refusal(),
        MessageSizeTooLargeError(),
        _wrapped(MessageSizeTooLargeError()),
        ProducerFenced(),
        asyncpg.exceptions.UniqueViolationError("duplicate key"),
        asyncpg.exceptions.InvalidPasswordError("password authentication failed"),
        ValueError("a bug"),
        KeyError("a bug"),
        asyncio.CancelledError(),
    ],
    ids=lambda error: type(error).__name__,
)
def test_what_fails_the_same_way_every_time_is_not(error: BaseException) -> None:
    assert not retriable(error)


async def test_a_retriable_failure_is_retried_on_the_back_off_and_heard() -> None:
    script = Script(Outage(), KafkaTimeoutError(), ConnectionResetError())
    heard: list[tuple[str, int, float]] = []

    def hear(failure: Retrying) -> None:
        heard.append((type(failure.error).__name__, failure.failures, failure.wait_s))

    answer = await retry(script, backoff=Backoff(0.5, 1.0), on_retry=hear, sleep=script.sleep)
    assert answer == "answered" and script.calls == 4
    assert script.waits == [0.5, 1.0, 1.0]
    assert heard == [
        ("Outage", 1, 0.5),
        ("KafkaTimeoutError", 2, 1.0),
        ("ConnectionResetError", 3, 1.0),
    ]


async def test_a_failure_that_is_not_retriable_propagates_at_once() -> None:
    script = Script(Outage(), Refusal("no"))
    with pytest.raises(Refusal):
        await retry(script, backoff=Backoff(0.5), sleep=script.sleep)
    assert script.calls == 2 and script.waits == [0.5]


async def test_the_attempts_count_those_made_before_the_call() -> None:
    script = Script(Outage(), Outage(), Outage())
    with pytest.raises(Outage):
        await retry(script, backoff=Backoff(1.0), attempts=6, failed_before=4, sleep=script.sleep)
    assert script.calls == 2, "attempts 5 and 6"
    assert script.waits == [16.0], "the wait after the fifth failure"


async def test_a_narrower_scope_lets_the_other_retriable_failures_through() -> None:
    script = Script(ConnectionRefusedError(), Outage())
    with pytest.raises(Outage):
        await retry(
            script,
            backoff=Backoff(0.1),
            only=lambda error: isinstance(error, OSError),
            sleep=script.sleep,
        )
    assert script.calls == 2


async def test_an_asynchronous_listener_is_awaited_before_the_wait() -> None:
    script = Script(Outage())
    order: list[str] = []

    async def hear(failure: Retrying) -> None:
        await asyncio.sleep(0)
        order.append("heard")

    async def sleep(seconds: float) -> None:
        order.append("waited")

    await retry(script, backoff=Backoff(0.1), on_retry=hear, sleep=sleep)
    assert order == ["heard", "waited"]


async def test_cancellation_ends_a_wait_and_is_never_retried() -> None:
    waiting = asyncio.Event()

    async def sleep(seconds: float) -> None:
        waiting.set()
        await asyncio.Event().wait()

    task = asyncio.create_task(retry(Script(Outage()), backoff=Backoff(60), sleep=sleep))
    await waiting.wait()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task


OWN_LOOPS = {
    "engram/infra/retry.py": "the one loop",
    # Not a retry: a sink of the log follower that fails with what it waits out rests on
    # DATABASE_BACKOFF while the follower's other sinks go on (a retry would stop them all).
    "projections/following/follower.py": "the log follower's rests",
    # Not a loop: when a failed webhook delivery is due again, stored in PostgreSQL and claimed
    # by whichever sender gets there (engram/notifications/queue.py).
    "engram/notifications/outcomes.py": "a delivery's due time",
}


def _waits_on_a_back_off(source: str) -> bool:
    """Whether the module computes a wait from a back-off itself (``….backoff.after(n)``,
    ``Backoff(…).after(n)``, ``DATABASE_BACKOFF.after(n)``): what a retry loop of its own does."""
    return any(
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr == "after"
        and "backoff" in ast.unparse(node.func.value).lower()
        for node in ast.walk(ast.parse(source))
    )


def test_no_loop_of_the_server_waits_on_a_back_off_by_hand() -> None:
    """``engram.client`` keeps its own loop by its import contract and uses no ``Backoff``."""
    folders = ("engram", "streams", "ingest", "projections", "schemas")  # the links not followed
    modules = {path.resolve() for folder in folders for path in (REPO / folder).rglob("*.py")}
    found = {
        str(path.relative_to(REPO))
        for path in modules
        if _waits_on_a_back_off(path.read_text(encoding="utf-8"))
    }
    assert found - set(OWN_LOOPS) == set(), "retry through engram.infra.retry.retry"
    assert "engram/infra/retry.py" in found, "the test still finds the loop it knows"
