"""Stopping and starting the local Kafka broker with the project's own script (dev/kafka.sh),
for the fault suite. Only a broker that script started from this checkout is touched: its pid
file lives in this checkout's ``.dev/kafka``."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


EPHEMERAL_RANGE = Path("/proc/sys/net/ipv4/ip_local_port_range")


def check_restartable(bootstrap: str) -> None:
    """Refuse a broker port inside the kernel's ephemeral range: while the broker is down, the
    clients' reconnects (and every other outgoing connection) draw local ports from that range,
    and one of them can take the broker's port, so it cannot bind again (measured: a broker on
    39092 failed to restart with "Address already in use"). The script's default, 19092, lies
    below the usual range (32768-60999)."""
    if not EPHEMERAL_RANGE.exists():
        return
    low, high = (int(n) for n in EPHEMERAL_RANGE.read_text().split())
    port = int(bootstrap.rpartition(":")[2])
    if low <= port <= high:
        raise AssertionError(
            f"the broker's port {port} lies in the ephemeral port range {low}-{high}: a client "
            "socket can take it while the broker is down; start the services on a port below "
            f"{low} (ENGRAM_DEV_KAFKA_PORT, e.g. the default 19092) to run the broker test"
        )


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
