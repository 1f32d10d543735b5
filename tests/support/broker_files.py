"""The broker's own files, read from this machine: what a person with access to the broker's
disk would find (a segment file, a file waiting to be deleted), searched for words.

The log directory comes from the broker itself (``log.dirs`` in its configuration, which
``DescribeConfigs`` reports), never from a path this repository assumes; a broker on another
machine has no files here, and a test that needs them says so and skips.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from aiokafka.admin import AIOKafkaAdminClient
from aiokafka.admin.config_resource import ConfigResource, ConfigResourceType

from engram.ingest.inbox_rolling import ROLL_MARGIN_MS
from engram.ingest.topics import INBOX_FILE_DELETE_DELAY_MS

SLACK_S = 5.0
"""The intake's fetch loop and the scan itself, on top of what the settings add up to."""


async def broker_configs(bootstrap: str) -> dict[str, str | None]:
    """Every broker's configuration, as the first broker of the cluster reports its own."""
    admin = AIOKafkaAdminClient(bootstrap_servers=bootstrap)
    await admin.start()
    try:
        cluster = await admin.describe_cluster()
        node = str(cluster["brokers"][0]["node_id"])
        [response] = await admin.describe_configs([ConfigResource(ConfigResourceType.BROKER, node)])
    finally:
        await admin.close()
    [resource] = response.resources
    return {entry[0]: entry[1] for entry in resource[4]}


async def local_log_dirs(bootstrap: str) -> list[Path]:
    """The broker's log directories that this machine can read (none for a remote broker)."""
    configs = await broker_configs(bootstrap)
    named = configs.get("log.dirs") or configs.get("log.dir") or ""
    return [Path(d) for d in named.split(",") if d and Path(d).is_dir()]


INBOX_DISK_BOUND_S = 60.0
"""The bound docs/privacy.md promises: moved inbox plaintext is off the broker's disk within it.
What :func:`disk_bound_s` computes (about 22.5 s) is a quiet broker's; a loaded 2-core machine
has taken longer, so tests wait for the promise."""


async def disk_bound_s(bootstrap: str, segment_ms: int) -> float:
    """How long moved inbox plaintext can stay in this broker's files: the segment's roll,
    the broker's next retention check (its ``log.retention.check.interval.ms``), the file's
    delete delay — docs/privacy.md's bound, for this broker."""
    interval = int((await broker_configs(bootstrap))["log.retention.check.interval.ms"] or 0)
    total_ms = segment_ms + ROLL_MARGIN_MS + interval + INBOX_FILE_DELETE_DELAY_MS
    return total_ms / 1000 + SLACK_S


def topic_files(dirs: Iterable[Path], prefix: str) -> list[Path]:
    """Every file of every partition of the topics named ``prefix…``: segments, indexes,
    snapshots, files renamed ``.deleted`` and directories renamed ``-delete`` alike."""
    found = []
    for root in dirs:
        for partition in root.iterdir():
            if partition.is_dir() and partition.name.startswith(prefix):
                found += [f for f in partition.rglob("*") if f.is_file()]
    return sorted(found)


def files_holding(files: Iterable[Path], words: Iterable[str]) -> dict[str, list[str]]:
    """The files whose bytes hold any of ``words`` (UTF-8, in any case), and which; a file the
    broker deletes while it is read holds nothing any more."""
    wanted = [(w, w.lower().encode()) for w in words]
    holding: dict[str, list[str]] = {}
    for path in files:
        try:
            data = path.read_bytes().lower()
        except (FileNotFoundError, IsADirectoryError):
            continue
        found = [w for w, raw in wanted if raw in data]
        if found:
            holding[str(path)] = found
    return holding
