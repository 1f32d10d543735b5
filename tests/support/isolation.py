"""Each integration test gets its own topics, consumer groups and tenant, on shared services."""

from __future__ import annotations

import contextlib
import secrets
import signal
import subprocess
import sys
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from aiokafka.admin import AIOKafkaAdminClient
from aiokafka.errors import UnknownTopicOrPartitionError
from pydantic import SecretStr

from engram.infra.settings import (
    DatabaseSettings,
    KafkaSettings,
    KeysSettings,
    Settings,
    subprocess_env,
)
from engram.keys.kek import new_kek_text

REPO = Path(__file__).resolve().parents[2]


@dataclass(frozen=True)
class Isolated:
    """Names unique to one test, so tests never see each other's records."""

    prefix: str
    bootstrap: str
    database_url: str
    partitions: int = 3
    max_event_bytes: int = 262_144
    kek: str = field(default_factory=new_kek_text, repr=False)
    """This test's key-encryption key: the log is encrypted by default, as in a deployment
    (its database is the test's own, so a fresh KEK meets no keys wrapped by another)."""

    @property
    def tenant(self) -> str:
        return f"t-{self.prefix}"

    def kafka(self, **overrides: object) -> KafkaSettings:
        values: dict[str, object] = {
            "bootstrap": self.bootstrap,
            "episodes_topic": f"{self.prefix}.episodes",
            "claims_topic": f"{self.prefix}.claims",
            "dlq_topic": f"{self.prefix}.episodes.dlq",
            "memory_events_topic": f"{self.prefix}.memory-events",
            "inbox_topic": f"{self.prefix}.inbox",
            "group_id": f"{self.prefix}-formation",
            "partitions": self.partitions,
            "max_event_bytes": self.max_event_bytes,
        }
        values.update(overrides)
        return KafkaSettings(**values)  # type: ignore[arg-type]

    def keys(self, *, encrypt_log: bool = True) -> KeysSettings:
        """Encrypted, as every deployment is by default; ``encrypt_log=False`` for a test of
        plaintext behaviour (its KEK still opens what is sealed)."""
        return KeysSettings(kek=SecretStr(self.kek), kek_file=None, encrypt_log=encrypt_log)

    def settings(self, *, encrypt_log: bool = True) -> Settings:
        return Settings(
            kafka=self.kafka(),
            database=DatabaseSettings(url=self.database_url),
            keys=self.keys(encrypt_log=encrypt_log),
        )

    def env(self, **kafka_overrides: object) -> dict[str, str]:
        """A child process's environment: this test's topics and database, and its KEK with
        the log encrypted (a test of plaintext behaviour takes the ENGRAM_KEYS_* out)."""
        return subprocess_env(
            self.kafka(**kafka_overrides),
            self.database_url,
            keys=self.keys(),
            ENGRAM_WORKER_HTTP_PORT="0",
        )


def new_prefix() -> str:
    return "it" + secrets.token_hex(4)


async def delete_topics(bootstrap: str, prefix: str) -> list[str]:
    """Delete every topic named after one test's prefix (its own and faust's internal ones).

    Tests create a handful of topics each and a long-lived dev broker kept them all: at 2 GB of
    test topics the suite ran several times slower (broker start-up, metadata, log cleaner).
    """
    admin = AIOKafkaAdminClient(bootstrap_servers=bootstrap)
    await admin.start()
    try:
        names = sorted(name for name in await admin.list_topics() if name.startswith(prefix))
        # another cleaner (or the test itself) may get there first
        if names:
            with contextlib.suppress(UnknownTopicOrPartitionError):
                await admin.delete_topics(names)
        return names
    finally:
        await admin.close()


def running_worker(
    isolated: Isolated, *args: str, log_path: Path, env: dict[str, str] | None = None
) -> AbstractContextManager[subprocess.Popen[bytes]]:
    """``engram worker`` as a real subprocess; stopped (SIGTERM, then SIGKILL) on exit."""
    return running_engram(
        isolated, "worker", "--loglevel", "info", *args, log_path=log_path, env=env
    )


@contextmanager
def running_engram(
    isolated: Isolated, *argv: str, log_path: Path, env: dict[str, str] | None = None
) -> Iterator[subprocess.Popen[bytes]]:
    """An ``engram`` command as a real subprocess; stopped (SIGTERM, then SIGKILL) on exit."""
    with log_path.open("wb") as log:
        process = subprocess.Popen(
            [sys.executable, "-m", "engram", *argv],
            cwd=REPO,
            env=env or isolated.env(),
            stdout=log,
            stderr=subprocess.STDOUT,
        )
        try:
            yield process
        finally:
            if process.poll() is None:
                process.send_signal(signal.SIGTERM)
                try:
                    process.wait(timeout=20)
                except subprocess.TimeoutExpired:
                    process.kill()
                    process.wait()
