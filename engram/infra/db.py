"""Connecting to PostgreSQL: one pool per process, built from settings, and riding out a
database that is briefly unreachable.

A stream processor that exits on the first refused connection turns a PostgreSQL restart into
an outage of formation; one that retries every error forever hides bugs. Only errors that mean
"the server cannot be reached or is not serving right now" are retried, with capped exponential
backoff and a log line per failure saying what to check; anything else propagates.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import TypeVar

import asyncpg
import structlog

from engram.infra.backoff import Backoff
from engram.infra.metrics import DATABASE_UNAVAILABLE
from engram.infra.retriable import UNAVAILABLE as UNAVAILABLE  # what "unavailable" is
from engram.infra.retriable import database_unavailable
from engram.infra.retriable import unavailable_cause as unavailable_cause
from engram.infra.retry import Retrying, retry
from engram.infra.settings import DatabaseSettings

log = structlog.get_logger(__name__)

T = TypeVar("T")

FIRST_DELAY_S = 0.5
MAX_DELAY_S = 30.0


async def leave_session_as_is(conn: asyncpg.Connection) -> None:
    """A pool's ``reset`` for sessions that leave no state behind: nothing to send.

    asyncpg's default reset sends ``SELECT pg_advisory_unlock_all(); CLOSE ALL; UNLISTEN *;
    RESET ALL`` on every release, a round trip each time. Before calling this it still rolls
    back a transaction left open and forgets the connection's listeners
    (``Connection._reset``), so what is skipped is only undoing session-level locks, cursors
    held across transactions, ``LISTEN`` and ``SET``: safe only for a pool whose users never
    do any of those (``tests/integration/test_projector_session_state.py`` holds it for the
    belief projector)."""


async def create_pool(
    settings: DatabaseSettings,
    *,
    role: str = "engram",
    schema: str | None = None,
    stateless_sessions: bool = False,
) -> asyncpg.Pool:
    """A pool whose sessions name their ``role`` in ``pg_stat_activity.application_name``.

    With ``schema`` (a generation's), unqualified table names resolve there first and then in
    ``public`` (the shared vocabulary): the writers of a generation need no other change.
    With ``stateless_sessions`` a released connection is not reset (:func:`leave_session_as_is`):
    for a pool whose every user is known to leave no session state behind.
    """
    server_settings = {"application_name": role}
    if schema is not None and schema != "public":
        server_settings["search_path"] = f"{schema}, public"
    pool = await asyncpg.create_pool(
        settings.url.get_secret_value(),
        min_size=1,
        max_size=settings.pool_max,
        server_settings=server_settings,
        reset=leave_session_as_is if stateless_sessions else None,
    )
    if pool is None:  # pragma: no cover - asyncpg only returns None when told not to connect
        raise RuntimeError("could not create a PostgreSQL connection pool")
    return pool


async def connect(settings: DatabaseSettings) -> asyncpg.Connection:
    return await asyncpg.connect(settings.url.get_secret_value())


@contextlib.asynccontextmanager
async def transaction(conn: asyncpg.Connection) -> AsyncIterator[None]:
    """``conn.transaction()``, raising what lost the connection when it is lost inside.

    When the connection closes mid-transaction, asyncpg's ``Transaction.__aexit__`` finds it
    closed and raises ``InterfaceError`` ("the underlying connection is closed") in place of
    the error that closed it. A retry loop cannot tell that from a bug, so a database outage
    that landed inside a statement stopped the projector instead of pausing it. This raises
    the outage itself (the first :data:`UNAVAILABLE` error in the chain), and any other
    ``InterfaceError`` as it is."""
    try:
        async with conn.transaction():
            yield
    except asyncpg.InterfaceError as error:
        # Not ``conn.is_closed()``: a pooled connection lost this way is detached from its
        # proxy already, and asking raises another InterfaceError.
        lost = unavailable_cause(error)
        if lost is None:
            raise
        raise lost from error


def report_unavailable(operation: str, error: BaseException, retry_in_s: float) -> None:
    DATABASE_UNAVAILABLE.labels(operation).inc()
    log.warning(
        "database.unavailable",
        operation=operation,
        error=type(error).__name__,
        detail=str(error)[:200],
        retry_in_s=retry_in_s,
        fix="check that PostgreSQL is running and that ENGRAM_DATABASE_URL reaches it",
    )


DATABASE_BACKOFF = Backoff(FIRST_DELAY_S, MAX_DELAY_S)
"""How every loop that waits for the database waits (:mod:`infra.backoff`)."""


async def retry_while_unavailable(
    operation: Callable[[], Awaitable[T]], *, what: str, first_delay_s: float = FIRST_DELAY_S
) -> T:
    """Run ``operation`` until the database answers it (:func:`infra.retry.retry`, waiting out
    the database only: every other failure propagates); cancellation still ends the wait.

    Only for operations that are safe to repeat (idempotent writes, reads, whole transactions:
    an error inside a transaction rolled it back)."""

    def report(failure: Retrying) -> None:
        report_unavailable(what, failure.error, failure.wait_s)

    return await retry(
        operation,
        backoff=Backoff(first_delay_s, MAX_DELAY_S),
        only=database_unavailable,
        on_retry=report,
    )
