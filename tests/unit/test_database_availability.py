"""Which database errors are waited out and which propagate: pure logic, no database."""

from __future__ import annotations

import asyncpg
import pytest

from engram.infra.db import DATABASE_BACKOFF, retry_while_unavailable, unavailable_cause
from engram.infra.metrics import DATABASE_UNAVAILABLE


def _unavailable_count(operation: str) -> float:
    value: float = DATABASE_UNAVAILABLE.labels(operation)._value.get()
    return value


@pytest.mark.parametrize(
    "error",
    [
        ConnectionRefusedError("connection refused"),
        TimeoutError("connect timed out"),
        asyncpg.exceptions.ConnectionDoesNotExistError("connection was closed"),
        asyncpg.exceptions.AdminShutdownError("terminating connection"),
        asyncpg.exceptions.CannotConnectNowError("the database system is starting up"),
        asyncpg.exceptions.TooManyConnectionsError("too many clients"),
    ],
    ids=type,
)
async def test_an_unreachable_database_is_waited_out(error: Exception) -> None:
    failures = [error, error]
    before = _unavailable_count("unit.flaky")

    async def flaky() -> str:
        if failures:
            raise failures.pop()
        return "answered"

    result = await retry_while_unavailable(flaky, what="unit.flaky", first_delay_s=0.001)
    assert result == "answered"
    assert _unavailable_count("unit.flaky") == before + 2


@pytest.mark.parametrize(
    "error",
    [
        asyncpg.exceptions.UniqueViolationError("duplicate key"),
        asyncpg.exceptions.UndefinedTableError("relation does not exist"),
        asyncpg.exceptions.InvalidPasswordError("password authentication failed"),
        ValueError("a bug"),
    ],
    ids=type,
)
async def test_anything_else_propagates_at_once(error: Exception) -> None:
    calls = 0

    async def broken() -> None:
        nonlocal calls
        calls += 1
        raise error

    with pytest.raises(type(error)):
        await retry_while_unavailable(broken, what="unit.broken", first_delay_s=0.001)
    assert calls == 1


def test_the_backoff_doubles_up_to_a_cap() -> None:
    delays = [DATABASE_BACKOFF.after(failures) for failures in range(1, 10)]
    assert delays[:4] == [0.5, 1.0, 2.0, 4.0]
    assert max(delays) == 30.0


def _masked(original: BaseException | None) -> asyncpg.InterfaceError:
    """What asyncpg raises from ``Transaction.__aexit__`` when ``original`` closed the
    connection inside the block (the original kept only as the exception's context)."""
    masking = asyncpg.InterfaceError(
        "cannot call Transaction.__aexit__(): the underlying connection is closed"
    )
    masking.__context__ = original
    return masking


def test_a_connection_lost_inside_a_transaction_is_an_outage_not_a_bug() -> None:
    lost = asyncpg.exceptions.ConnectionDoesNotExistError("closed in the middle of operation")
    assert unavailable_cause(_masked(lost)) is lost
    # a savepoint's exit masked it once more on the way out
    assert unavailable_cause(_masked(_masked(lost))) is lost


def test_an_interface_error_of_a_bug_stays_one() -> None:
    assert unavailable_cause(_masked(None)) is None
    assert unavailable_cause(_masked(ValueError("a bug"))) is None
