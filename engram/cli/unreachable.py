"""Turning "a service is not there" into one line that says what to start, not a traceback.

Every command that reads or writes memory needs PostgreSQL, Kafka or both. When one is down the
error surfaces from deep inside asyncpg or aiokafka as a stack of frames that names a socket,
not a setting; a person at a terminal needs to know which service, at which address, and which
setting points there. The database URL is a secret: only its host and port are shown.
"""

from __future__ import annotations

import socket
from urllib.parse import urlsplit

import asyncpg
from aiokafka.errors import KafkaConnectionError

from engram.infra.settings import Settings

UNREACHABLE: tuple[type[BaseException], ...] = (
    ConnectionError,  # refused or reset (ConnectionRefusedError, ConnectionResetError, ...)
    TimeoutError,
    socket.gaierror,  # a host name that does not resolve
    asyncpg.PostgresConnectionError,
    asyncpg.exceptions.CannotConnectNowError,
    asyncpg.exceptions.InvalidPasswordError,
    asyncpg.exceptions.InvalidCatalogNameError,  # the database does not exist
    KafkaConnectionError,
)


def database_address(settings: Settings) -> str:
    parts = urlsplit(settings.database.url.get_secret_value())
    database = parts.path.lstrip("/") or "(default database)"
    return f"{parts.hostname or 'localhost'}:{parts.port or 5432}/{database}"


def explain(error: BaseException, settings: Settings) -> str:
    """One paragraph naming the service, its address and the setting to check."""
    kind = type(error).__name__
    detail = str(error).strip() or kind
    if isinstance(error, KafkaConnectionError):
        return (
            f"cannot reach Kafka at {settings.kafka.bootstrap} ({detail}). Check that the "
            "broker is running and that ENGRAM_KAFKA_BOOTSTRAP points at it "
            "(`make services-up` starts one for development)."
        )
    if isinstance(error, asyncpg.exceptions.InvalidPasswordError):
        return (
            f"PostgreSQL at {database_address(settings)} refused the credentials in "
            "ENGRAM_DATABASE_URL; check the user and password there."
        )
    if isinstance(error, asyncpg.exceptions.InvalidCatalogNameError):
        return (
            f"PostgreSQL has no database {database_address(settings)} ({detail}); create it "
            "and run `engram migrate`, or fix ENGRAM_DATABASE_URL."
        )
    return (
        f"cannot reach a service ({kind}: {detail}). PostgreSQL is expected at "
        f"{database_address(settings)} (ENGRAM_DATABASE_URL) and Kafka at "
        f"{settings.kafka.bootstrap} (ENGRAM_KAFKA_BOOTSTRAP); check that both are running "
        "(`make services-up` starts them for development)."
    )
