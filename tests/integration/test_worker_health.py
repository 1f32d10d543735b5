"""Worker health on loopback: alive, ready once assigned, and Prometheus metrics that count
what formation did (formed, refused, dead-lettered, attempts, lag)."""

from __future__ import annotations

import asyncio
import socket
import time
from pathlib import Path

import asyncpg
import httpx
import pytest

from engram.waiting import wait_until_formed
from ingest.producer import EpisodeProducer
from ingest.topics import ensure_topics
from schemas.common import episode_key
from tests.support.episodes import turn
from tests.support.isolation import Isolated, running_worker

pytestmark = pytest.mark.integration


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


async def _get(url: str, deadline_s: float = 60) -> httpx.Response:
    deadline = time.monotonic() + deadline_s
    async with httpx.AsyncClient() as client:
        while True:
            try:
                response = await client.get(url)
                if response.status_code == 200 or time.monotonic() > deadline:
                    return response
            except httpx.TransportError:
                assert time.monotonic() < deadline, f"{url} never answered"
            await asyncio.sleep(0.1)


async def test_the_worker_reports_health_readiness_and_metrics(
    isolated: Isolated, pool: asyncpg.Pool, tmp_path: Path
) -> None:
    kafka = isolated.kafka(partitions=1)
    await ensure_topics(kafka)
    port = _free_port()
    env = isolated.env(partitions=1)
    env["ENGRAM_WORKER_HTTP_PORT"] = str(port)
    good = turn(isolated.tenant, "ana", "p", "I live in Lisbon. Maybe I like tea.", seq=0)
    with running_worker(isolated, log_path=tmp_path / "w.log", env=env):
        async with EpisodeProducer(kafka) as producer:
            await producer.publish_raw(episode_key(isolated.tenant, "p"), b"not json")
            await producer.publish(good)
        await wait_until_formed(pool, [good.event_id], timeout_s=90)
        base = f"http://127.0.0.1:{port}"
        assert (await _get(f"{base}/health")).json() == {"status": "alive"}
        ready = await _get(f"{base}/ready")
        assert ready.status_code == 200 and ready.json()["ready"] is True
        metrics = (await _get(f"{base}/metrics")).text
    assert "engram_episodes_formed_total 1.0" in metrics
    assert 'engram_dead_letters_total{reason="not_json"} 1.0' in metrics
    assert 'engram_formation_attempts_total{outcome="succeeded"} 1.0' in metrics
    assert 'engram_proposals_refused_total{reason="not_asserted"}' in metrics
    assert "engram_consumer_lag" in metrics and "engram_model_latency_seconds" in metrics
