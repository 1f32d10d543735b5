"""Webhooks on the real services: `engram webhooks add` registers a loopback receiver, `engram
worker` forms a turn and notifies it, signed (the standardwebhooks library verifies) and without
the turn's words; killed with SIGKILL mid-delivery, a new worker delivers it again under the same
webhook-id and nothing is lost."""

from __future__ import annotations

import asyncio
import json
import os
import re
import signal
import subprocess
import sys
from pathlib import Path

import asyncpg
import pytest

from engram.ingest.producer import EpisodeProducer
from engram.ingest.topics import ensure_topics
from engram.keys.kek import new_kek_text
from engram.projections.reads.freshness import freshness
from tests.support.conditions import wait_until
from tests.support.episodes import turn
from tests.support.isolation import REPO, Isolated, running_engram, running_worker
from tests.support.webhook_receiver import Receiver

pytestmark = pytest.mark.e2e

WORDS = "I live in Lisbon and I work at Acme Robotics."


def _env(isolated: Isolated, **extra: str) -> dict[str, str]:
    return {
        **isolated.env(),
        "ENGRAM_KEYS_KEK": KEK,
        "ENGRAM_WEBHOOKS_ALLOW_PRIVATE": "true",
        "ENGRAM_WEBHOOKS_POLL_S": "0.2",
        **extra,
    }


KEK = new_kek_text()


def _engram(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "engram", *args],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


async def _register(isolated: Isolated, env: dict[str, str], url: str) -> dict[str, str]:
    added = await asyncio.to_thread(
        _engram, env, "webhooks", "add", "--tenant", isolated.tenant, "--project", "garden",
        "--url", url, "--json",
    )  # fmt: skip
    assert added.returncode == 0, added.stderr
    created: dict[str, str] = json.loads(added.stdout)
    assert created["secret"].startswith("whsec_") and created["id"]
    return created


async def _append(isolated: Isolated, *contents: str) -> None:
    await ensure_topics(isolated.kafka())
    async with EpisodeProducer(isolated.kafka()) as producer:
        await producer.publish_many([turn(isolated.tenant, "p1", "garden", *contents)])


async def test_a_formed_belief_reaches_a_loopback_receiver_signed_and_without_the_words(
    isolated: Isolated, pool: asyncpg.Pool, tmp_path: Path
) -> None:
    env = _env(isolated)
    receiver = await Receiver().start()
    try:
        refused = await asyncio.to_thread(
            _engram, env, "webhooks", "add", "--tenant", isolated.tenant, "--project",
            "garden", "--url", "http://169.254.169.254/",
        )  # fmt: skip
        assert refused.returncode == 2 and "link-local" in refused.stderr
        receiver.secret = (await _register(isolated, env, receiver.url))["secret"]
        await _append(isolated, WORDS)
        with running_worker(isolated, log_path=tmp_path / "worker.log", env=env):
            await wait_until(
                lambda: (
                    bool(receiver.of_type("memory.formed"))
                    and bool(receiver.of_type("project.formed_through"))
                ),
                timeout_s=120,
                what="memory.formed and project.formed_through, verified",
            )
        assert receiver.received == receiver.verified()  # every request verified
        formed = receiver.of_type("memory.formed")[0].payload["data"]
        assert (formed["tenant"], formed["principal"], formed["project"]) == (
            isolated.tenant, "p1", "garden",
        )  # fmt: skip
        words = {w.lower() for w in re.findall(r"[A-Za-z]{4,}", WORDS)}
        for received in receiver.received:
            assert not words & set(re.findall(r"[a-z]+", received.body.decode().lower()))

        async def every_delivery_delivered() -> bool:
            # what was owed after the two kinds arrived (a later formed_through, say) may
            # still be on its way: the listing is read until nothing is pending
            listed = await asyncio.to_thread(
                _engram, env, "webhooks", "deliveries", "--tenant", isolated.tenant, "--json"
            )
            assert listed.returncode == 0, listed.stderr
            states = {json.loads(line)["state"] for line in listed.stdout.splitlines()}
            assert states <= {"delivered", "pending"}, states
            return states == {"delivered"}

        await wait_until(
            every_delivery_delivered, timeout_s=60, what="every delivery listed as delivered"
        )
        fresh = await freshness(pool, tenant=isolated.tenant, project="garden")
        assert fresh.notifications is not None and fresh.notifications.pending == 0
        assert fresh.notifications.endpoints == 1
    finally:
        await receiver.stop()


async def test_a_worker_killed_mid_delivery_loses_nothing_and_resends_the_same_id(
    isolated: Isolated, pool: asyncpg.Pool, tmp_path: Path
) -> None:
    env = _env(isolated, ENGRAM_WEBHOOKS_LEASE_S="3", ENGRAM_WEBHOOKS_TIMEOUT_S="2")
    hold = asyncio.Event()
    receiver = await Receiver(hold=hold).start()
    try:
        receiver.secret = (await _register(isolated, env, receiver.url))["secret"]
        await _append(isolated, WORDS, "I prefer dark mode.")
        with running_worker(isolated, log_path=tmp_path / "first.log", env=env) as first:
            await wait_until(lambda: bool(receiver.received), timeout_s=120, what="first request")
            os.kill(first.pid, signal.SIGKILL)  # the request is in flight, unanswered
            first.wait(timeout=30)
        held = receiver.received[0].webhook_id
        hold.set()
        with running_worker(isolated, log_path=tmp_path / "second.log", env=env):
            await wait_until(
                lambda: _all_delivered(pool), timeout_s=120, what="every delivery delivered"
            )
        owed = {
            str(r["delivery_id"])
            for r in await pool.fetch("SELECT delivery_id FROM webhook_delivery")
        }
        got = [r.webhook_id for r in receiver.verified()]
        assert set(got) == owed and held in owed
        # the one in flight came twice, under its own id; nothing else did
        assert got.count(held) == 2
        assert all(got.count(i) == 1 for i in owed - {held})
    finally:
        hold.set()
        await receiver.stop()


async def _all_delivered(pool: asyncpg.Pool) -> bool:
    row = await pool.fetchrow(
        "SELECT count(*) FILTER (WHERE state = 'delivered') AS done, "
        "count(*) FILTER (WHERE event_type = 'memory.formed') AS formed, count(*) AS n "
        "FROM webhook_delivery"
    )
    return bool(row["formed"] >= 2 and row["done"] == row["n"])


async def test_engram_notifier_alone_sends_what_is_owed_and_refuses_to_start_without_a_kek(
    isolated: Isolated, pool: asyncpg.Pool, tmp_path: Path
) -> None:
    env = _env(isolated)
    without = {k: v for k, v in env.items() if k not in ("ENGRAM_KEYS_KEK", "ENGRAM_KEYS_KEK_FILE")}
    refused = await asyncio.to_thread(_engram, without, "notifier")
    assert refused.returncode == 2 and "key-encryption key" in refused.stderr
    receiver = await Receiver().start()
    try:
        receiver.secret = (await _register(isolated, env, receiver.url))["secret"]
        await _append(isolated, WORDS)
        # formation and projection in one process, notifications in another
        with (
            running_worker(isolated, "--no-notifier", log_path=tmp_path / "w.log", env=env),
            running_engram(isolated, "notifier", log_path=tmp_path / "n.log", env=env) as alone,
        ):
            await wait_until(
                lambda: bool(receiver.of_type("memory.formed")),
                timeout_s=120,
                what="memory.formed from engram notifier",
            )
            alone.send_signal(signal.SIGTERM)
            assert alone.wait(timeout=30) == 0
    finally:
        await receiver.stop()
