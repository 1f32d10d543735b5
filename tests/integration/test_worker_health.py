"""Worker and projector processes: health on loopback (alive, ready once assigned) and
Prometheus metrics that count what they did (formed, refused, dead-lettered, attempts, lag,
batches projected)."""

from __future__ import annotations

import signal
from pathlib import Path

import asyncpg
import pytest

from engram.ingest.producer import EpisodeProducer
from engram.ingest.topics import ensure_topics
from engram.schemas.common import episode_key
from engram.watermarks.waiting import wait_until_formed
from tests.support.conditions import wait_until
from tests.support.episodes import turn
from tests.support.http import first_ok, free_port
from tests.support.isolation import Isolated, running_engram, running_worker

pytestmark = pytest.mark.integration


async def test_the_worker_reports_health_readiness_and_metrics(
    isolated: Isolated, pool: asyncpg.Pool, tmp_path: Path
) -> None:
    kafka = isolated.kafka(partitions=1)
    await ensure_topics(kafka)
    port = free_port()
    env = isolated.env(partitions=1)
    env["ENGRAM_WORKER_HTTP_PORT"] = str(port)
    good = turn(isolated.tenant, "ana", "p", "I live in Lisbon. Maybe I like tea.", seq=0)
    with running_worker(isolated, log_path=tmp_path / "w.log", env=env):
        async with EpisodeProducer(kafka) as producer:
            await producer.publish_raw(episode_key(isolated.tenant, "p"), b"not json")
            await producer.publish(good)
        await wait_until_formed(pool, [good.event_id], timeout_s=90)
        base = f"http://127.0.0.1:{port}"
        assert (await first_ok(f"{base}/health")).json() == {"status": "alive"}
        ready = await first_ok(f"{base}/ready")
        assert ready.status_code == 200 and ready.json()["ready"] is True
        metrics = (await first_ok(f"{base}/metrics")).text
    assert "engram_episodes_formed_total 1.0" in metrics
    assert 'engram_dead_letters_total{reason="not_json"} 1.0' in metrics
    assert 'engram_formation_attempts_total{outcome="succeeded"} 1.0' in metrics
    assert 'engram_proposals_refused_total{reason="not_asserted"}' in metrics
    assert "engram_consumer_lag" in metrics and "engram_model_latency_seconds" in metrics


async def test_formation_and_projection_run_as_separate_processes(
    isolated: Isolated, pool: asyncpg.Pool, tmp_path: Path
) -> None:
    kafka = isolated.kafka(partitions=1)
    await ensure_topics(kafka)
    port = free_port()
    projector_env = isolated.env(partitions=1)
    projector_env["ENGRAM_WORKER_HTTP_PORT"] = str(port)
    turns = [turn(isolated.tenant, "ana", "p", f"I use Tool{n}.", seq=n) for n in range(3)]
    with (
        running_worker(isolated, "--no-projector", log_path=tmp_path / "formation.log"),
        running_engram(
            isolated,
            "--loglevel",
            "info",
            "projector",
            log_path=tmp_path / "projector.log",
            env=projector_env,
        ) as projector,
    ):
        async with EpisodeProducer(kafka) as producer:
            await producer.publish_many(turns)
        await wait_until_formed(pool, [t.event_id for t in turns], timeout_s=90)
        base = f"http://127.0.0.1:{port}"
        ready = await first_ok(f"{base}/ready")
        assert ready.json() == {"ready": True, "reason": "ready"}
        metrics = (await first_ok(f"{base}/metrics")).text
        assert 'engram_batches_projected_total{outcome="applied"} 3.0' in metrics

        projector.send_signal(signal.SIGTERM)
        await wait_until(
            lambda: projector.poll() is not None, timeout_s=30, what="the projector stopped"
        )
        assert projector.returncode == 0
