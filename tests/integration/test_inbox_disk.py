"""The inbox's plaintext leaves the broker's disk, not only its offsets, within the bound
docs/privacy.md states: a turn a plain producer wrote is on the broker's disk in clear until the
intake moves it; after that, the intake closes its segment and the broker deletes the file. The
broker's own log directory is searched, byte for byte, for the turn's words."""

from __future__ import annotations

import asyncio
import secrets
import time

import asyncpg
import pytest
from aiokafka import AIOKafkaProducer

from engram.ingest.inbox import InboxIntake
from engram.ingest.topics import ensure_topics
from engram.sealing.opening import open_sealer
from tests.support.broker_files import (
    INBOX_DISK_BOUND_S,
    broker_configs,
    disk_bound_s,
    files_holding,
    local_log_dirs,
    topic_files,
)
from tests.support.conditions import wait_until
from tests.support.episodes import turn
from tests.support.isolation import Isolated

pytestmark = pytest.mark.integration

BOUND_S = INBOX_DISK_BOUND_S


async def test_the_inbox_plaintext_leaves_the_brokers_disk_within_the_stated_bound(
    isolated: Isolated, pool: asyncpg.Pool
) -> None:
    dirs = await local_log_dirs(isolated.bootstrap)
    if not dirs:
        pytest.skip("the broker's log directory is not on this machine: its files cannot be read")
    kafka = isolated.kafka(partitions=1)
    bound = await disk_bound_s(isolated.bootstrap, kafka.inbox_segment_ms)
    interval = (await broker_configs(isolated.bootstrap))["log.retention.check.interval.ms"]
    assert bound <= BOUND_S, (
        f"the broker checks for deletable segments every {interval} ms, so moved plaintext can "
        f"stay on its disk {bound:.0f} s: set log.retention.check.interval.ms=10000 (dev/kafka.sh "
        "writes it; restart the broker: make services-down services-up)"
    )
    await ensure_topics(kafka)
    words = [f"zq{secrets.token_hex(6)}" for _ in range(3)]
    said = [
        turn(isolated.tenant, "ana", "p", f"I live in {word}.", seq=i)
        for i, word in enumerate(words)
    ]
    producer = AIOKafkaProducer(bootstrap_servers=kafka.bootstrap, acks="all")
    await producer.start()
    try:
        for episode in said:  # what a producer outside Engram writes: the turn, in clear
            await producer.send_and_wait(kafka.inbox_topic, episode.model_dump_json().encode())
    finally:
        await producer.stop()

    def inbox_holding() -> dict[str, list[str]]:
        return files_holding(topic_files(dirs, f"{kafka.inbox_topic}-"), words)

    await wait_until(
        lambda: len({w for found in inbox_holding().values() for w in found}) == len(words),
        timeout_s=30,
        what="the turns' words in the inbox's files (the scan finds them before the move)",
    )

    intake = InboxIntake(kafka, (await open_sealer(isolated.keys(), pool)).seal)
    running = asyncio.create_task(intake.run())
    try:
        await wait_until(lambda: intake.appended == len(said), timeout_s=60, what="the move")
        moved_at = time.monotonic()
        await wait_until(
            lambda: not inbox_holding(), timeout_s=BOUND_S, what="the inbox's files without them"
        )
        gone_after = time.monotonic() - moved_at
    finally:
        intake.stop()
        await running
    print(f"inbox plaintext off the broker's disk {gone_after:.1f} s after the move")
    assert gone_after <= BOUND_S
    # What was moved is sealed: the log's files hold none of it either.
    assert files_holding(topic_files(dirs, f"{kafka.episodes_topic}-"), words) == {}
