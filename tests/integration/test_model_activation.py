"""Evidence-gated activation, end to end: `engram eval formation --arm model --record` against
the local OpenAI-compatible server writes the artifact; a model worker starts and forms with a
passing one, and refuses — saying what to run — without one, with one for another prompt or
model, or with one that fails; the documented override starts it anyway, loudly."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import asyncpg
import pytest

from engram.ingest.producer import EpisodeProducer
from engram.ingest.topics import ensure_topics
from engram.policies.prompt import packaged_prompt_bytes
from engram.streams.model.evidence import read_evidence
from tests.fakes.model_scripts import echo_model
from tests.fakes.openai_server import FakeOpenAIServer, Reply
from tests.support.conditions import wait_until
from tests.support.episodes import turn
from tests.support.isolation import REPO, Isolated, running_worker
from tests.support.model_env import model_worker_env

pytestmark = pytest.mark.model

RECORD_HINT = "engram eval formation --arm model --record"


def gated_env(isolated: Isolated, server: FakeOpenAIServer, evidence: Path) -> dict[str, str]:
    """A model worker's environment with the evidence gate on (no override)."""
    env = model_worker_env(isolated.env(partitions=1), server)
    del env["ENGRAM_FORMATION_ALLOW_UNEVALUATED_MODEL"]
    env["ENGRAM_FORMATION_EVIDENCE_PATH"] = str(evidence)
    return env


async def engram(env: dict[str, str], *argv: str, timeout_s: float = 300) -> tuple[int, str, str]:
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "engram",
        *argv,
        cwd=REPO,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    stdout, stderr = await asyncio.wait_for(process.communicate(), timeout_s)
    assert process.returncode is not None
    return process.returncode, stdout.decode(), stderr.decode()


async def record(env: dict[str, str], evidence: Path) -> tuple[int, dict[str, Any]]:
    argv = ("eval", "formation", "--corpus", "tests/corpus", "--arm", "model", "--record")
    code, stdout, stderr = await engram(env, *argv, "--output", str(evidence), "--json")
    assert code in (0, 1), stderr[-2000:]
    return code, json.loads(stdout)


async def refusal(env: dict[str, str]) -> str:
    code, _, stderr = await engram(env, "worker", timeout_s=120)
    assert code == 2, stderr[-2000:]
    return " ".join(stderr.split())


async def forms_a_belief(
    isolated: Isolated, pool: asyncpg.Pool, env: dict[str, str], log_path: Path
) -> None:
    kafka = isolated.kafka(partitions=1)
    await ensure_topics(kafka)
    with running_worker(isolated, log_path=log_path, env=env):
        async with EpisodeProducer(kafka) as producer:
            await producer.publish(turn(isolated.tenant, "ana", "atlas", "I live in Lisbon."))

        async def formed() -> bool:
            count = await pool.fetchval(
                "SELECT count(*) FROM belief WHERE tenant = $1", isolated.tenant
            )
            return bool(count)

        await wait_until(formed, timeout_s=120, what="a belief formed by the model worker")


def silent_model() -> Callable[[Any], Reply]:
    """A model that never proposes anything: it covers no positive case."""
    return lambda body: Reply.claims()


async def test_a_passing_artifact_lets_a_model_worker_start_and_form(
    isolated: Isolated, pool: asyncpg.Pool, tmp_path: Path
) -> None:
    evidence = tmp_path / "evidence.json"
    async with FakeOpenAIServer(echo_model()) as server:
        env = gated_env(isolated, server, evidence)
        code, report = await record(env, evidence)
        assert code == 0, report["evidence"]["failures"]
        recorded = read_evidence(evidence)
        assert recorded.passed and recorded.model.fabricated == 0
        assert recorded.model.coverage >= 0.8
        assert recorded.policy.model_name == "fake-model"
        assert recorded.policy.model_origin == server.origin
        assert report["evidence_path"] == str(evidence)
        await forms_a_belief(isolated, pool, env, tmp_path / "worker.log")
    assert "formation.model_activated" in (tmp_path / "worker.log").read_text()


async def test_without_an_artifact_the_worker_refuses_and_says_what_to_run(
    isolated: Isolated, tmp_path: Path
) -> None:
    async with FakeOpenAIServer(echo_model()) as server:
        message = await refusal(gated_env(isolated, server, tmp_path / "missing.json"))
        assert server.requests == []
    assert "not started" in message and "has no evaluation" in message
    assert RECORD_HINT in message


async def test_an_artifact_for_another_prompt_or_model_is_stale(
    isolated: Isolated, tmp_path: Path
) -> None:
    evidence = tmp_path / "evidence.json"
    edited = tmp_path / "extraction.yaml"
    edited.write_bytes(packaged_prompt_bytes() + b"\n# reworded\n")
    async with FakeOpenAIServer(echo_model()) as server:
        env = gated_env(isolated, server, evidence)
        code, _ = await record(env, evidence)
        assert code == 0
        other_prompt = await refusal({**env, "ENGRAM_FORMATION_PROMPT_PATH": str(edited)})
        other_model = await refusal({**env, "ENGRAM_MODEL_NAME": "another-model"})
    assert "recorded for another policy (prompt differs)" in other_prompt
    assert "model name fake-model != another-model" in other_model
    assert RECORD_HINT in other_prompt and RECORD_HINT in other_model


async def test_a_failing_artifact_is_written_and_refuses(
    isolated: Isolated, tmp_path: Path
) -> None:
    evidence = tmp_path / "evidence.json"
    async with FakeOpenAIServer(silent_model()) as server:
        env = gated_env(isolated, server, evidence)
        code, report = await record(env, evidence)
        assert code == 1
        assert not report["evidence"]["passed"]
        message = await refusal(env)
    assert "does not pass: coverage 0.000" in message
    assert "regression: the model arm matched 0 expected claims" in message


async def test_the_override_starts_without_evidence_and_says_so(
    isolated: Isolated, pool: asyncpg.Pool, tmp_path: Path
) -> None:
    async with FakeOpenAIServer(echo_model()) as server:
        env = gated_env(isolated, server, tmp_path / "missing.json")
        env["ENGRAM_FORMATION_ALLOW_UNEVALUATED_MODEL"] = "true"
        await forms_a_belief(isolated, pool, env, tmp_path / "worker.log")
    log = (tmp_path / "worker.log").read_text()
    assert "formation.model_unevaluated" in log
    assert "ENGRAM_FORMATION_ALLOW_UNEVALUATED_MODEL is set" in log
