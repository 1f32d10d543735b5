"""A command whose service is down says which one and which setting, not a stack of frames."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from collections.abc import Iterator

import pytest

from tests.support.isolation import REPO

pytestmark = pytest.mark.e2e

PASSWORD = "not-for-the-terminal"


@pytest.fixture
def closed_port() -> Iterator[int]:
    """A loopback port nothing listens on: bound to learn a free one, then closed."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = int(probe.getsockname()[1])
    yield port


def engram(*args: str, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "engram", *args],
        cwd=REPO,
        env={**os.environ, "ENGRAM_LOG_LEVEL": "warning", **env},
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


@pytest.mark.parametrize(
    "argv",
    [["migrate"], ["mcp", "--token", "tok"], ["runs", "list", "--tenant", "t", "--principal", "p"]],
    ids=["migrate", "mcp", "runs-list"],
)
def test_a_database_that_is_down_is_named_with_its_setting(
    closed_port: int, argv: list[str]
) -> None:
    url = f"postgresql://engram:{PASSWORD}@127.0.0.1:{closed_port}/engram"
    done = engram(*argv, ENGRAM_DATABASE_URL=url)
    assert done.returncode == 1, done.stderr
    said = " ".join(done.stderr.split())
    assert "Traceback" not in done.stderr
    assert f"127.0.0.1:{closed_port}/engram" in said
    assert "ENGRAM_DATABASE_URL" in said
    assert PASSWORD not in done.stderr + done.stdout


def test_a_broker_that_is_down_is_named_with_its_setting(closed_port: int) -> None:
    bootstrap = f"127.0.0.1:{closed_port}"
    done = engram(
        "ingest", str(REPO / "examples" / "conversation.jsonl"), ENGRAM_KAFKA_BOOTSTRAP=bootstrap
    )
    assert done.returncode == 1, done.stderr
    said = " ".join(done.stderr.split())
    assert "Traceback" not in done.stderr
    assert f"cannot reach Kafka at {bootstrap}" in said
    assert "ENGRAM_KAFKA_BOOTSTRAP" in said
