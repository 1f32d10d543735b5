"""Finding Kafka and PostgreSQL for integration tests.

Order: explicit environment variables; the local services that ``make services-up`` starts
(their settings file ``.dev/services.env``); testcontainers when a Docker engine answers;
otherwise the tests fail with the command that starts the services. Never a skip: in CI a
missing service is a failure.
"""

from __future__ import annotations

import os
import socket
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlparse

from tests.support.dotenv_values import read_env_file

REPO = Path(__file__).resolve().parents[2]
SERVICES_ENV = REPO / ".dev" / "services.env"
START_HINT = "start them with `make services-up` (or `bash dev/services.sh up`)"


@dataclass(frozen=True)
class Services:
    bootstrap: str
    database_url: str
    origin: str


def _reachable(host: str, port: int) -> bool:
    try:
        with socket.create_connection((host, port), timeout=1.0):
            return True
    except OSError:
        return False


def _kafka_reachable(bootstrap: str) -> bool:
    host, _, port = bootstrap.split(",")[0].rpartition(":")
    return _reachable(host or "127.0.0.1", int(port))


def _pg_reachable(url: str) -> bool:
    parsed = urlparse(url)
    return _reachable(parsed.hostname or "127.0.0.1", parsed.port or 5432)


def _from_docker() -> Services | None:
    try:
        import docker  # type: ignore[import-untyped]

        docker.from_env().ping()
    except Exception:
        return None
    from testcontainers.kafka import KafkaContainer
    from testcontainers.postgres import PostgresContainer

    kafka = KafkaContainer().with_kraft()
    kafka.start()
    postgres = PostgresContainer("postgres:16", driver=None)
    postgres.start()
    return Services(kafka.get_bootstrap_server(), postgres.get_connection_url(), "testcontainers")


def find_services() -> Services:
    bootstrap = os.environ.get("ENGRAM_KAFKA_BOOTSTRAP")
    database_url = os.environ.get("ENGRAM_DATABASE_URL")
    if bootstrap and database_url:
        return _checked(Services(bootstrap, database_url, "environment"))
    if SERVICES_ENV.exists():
        values = read_env_file(SERVICES_ENV)
        local = Services(
            values["ENGRAM_KAFKA_BOOTSTRAP"], values["ENGRAM_DATABASE_URL"], str(SERVICES_ENV)
        )
        if _kafka_reachable(local.bootstrap) and _pg_reachable(local.database_url):
            return local
    docker_services = _from_docker()
    if docker_services is not None:
        return docker_services
    raise RuntimeError(
        f"Kafka and PostgreSQL are not running for the integration tests; {START_HINT}"
    )


def _checked(services: Services) -> Services:
    if not _kafka_reachable(services.bootstrap):
        raise RuntimeError(
            f"Kafka at {services.bootstrap} ({services.origin}) does not answer; {START_HINT}"
        )
    if not _pg_reachable(services.database_url):
        raise RuntimeError(f"PostgreSQL ({services.origin}) does not answer; {START_HINT}")
    return services
