"""Worker health on loopback: alive, ready once assigned, and Prometheus metrics that count
what formation did (formed, refused, dead-lettered, attempts, lag)."""

from __future__ import annotations

import socket
from pathlib import Path

import asyncpg
import httpx
import pytest

from engram.waiting import wait_until_formed
from ingest.producer import EpisodeProducer
from ingest.topics import ensure_topics
from schemas.common import episode_key
from tests.support.conditions import wait_until
from tests.support.episodes import turn
from tests.support.isolation import Isolated, running_worker

pytestmark = pytest.mark.integration


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


async def _get(url: str, deadline_s: float = 60) -> httpx.Response:
    """The first 200 answer from ``url`` (the worker binds its port shortly after starting)."""
    answers: list[httpx.Response] = []

    async def answered() -> bool:
        try:
            async with httpx.AsyncClient() as client:
                answers.append(await client.get(url))
        except httpx.TransportError:
            return False
        return answers[-1].status_code == 200

    await wait_until(answered, timeout_s=deadline_s, what=f"{url} answering 200", poll_s=0.1)
    return answers[-1]


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
