"""Stopping and starting the local Kafka broker with the project's own script (dev/kafka.sh),
for the fault suite. Only a broker that script started from this checkout is touched: its pid
file lives in this checkout's ``.dev/kafka``."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def _script_env(bootstrap: str) -> dict[str, str]:
    """The ports the broker was started with: ``ENGRAM_DEV_KAFKA_PORT`` and
    ``ENGRAM_DEV_KAFKA_CONTROLLER_PORT`` if set, else the bootstrap port and the next one (the
    script's own pairing, 19092/19093)."""
    port = int(bootstrap.rpartition(":")[2])
    env = dict(os.environ)
    env.setdefault("ENGRAM_DEV_KAFKA_PORT", str(port))
    env.setdefault("ENGRAM_DEV_KAFKA_CONTROLLER_PORT", str(port + 1))
    return env


async def kafka_script(action: str, bootstrap: str) -> None:
    """Run ``dev/kafka.sh ACTION`` (up, down, status); fail naming its output if it fails."""
    process = await asyncio.create_subprocess_exec(
        "bash",
        str(REPO / "dev" / "kafka.sh"),
        action,
        env=_script_env(bootstrap),
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.STDOUT,
    )
    output, _ = await process.communicate()
    if process.returncode != 0:
        raise AssertionError(
            f"dev/kafka.sh {action} failed ({process.returncode}): {output.decode()[-2000:]}\n"
            "the broker test needs the broker that `bash dev/kafka.sh up` started from this "
            "checkout (ENGRAM_DEV_KAFKA_PORT / ENGRAM_DEV_KAFKA_CONTROLLER_PORT name its ports)"
        )
