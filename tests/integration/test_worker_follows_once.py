"""How many times one ``engram worker`` fetches and opens each turn of a sealed log, counted by
the worker's own metrics, not read off the code: with an embedder that keeps the index's pace
(WordLlama) once for the message index and the vectors together (one log follower, two sinks)
and once more for formation; with the contextual model kept in the worker, whose embedding
would pace the index, the vectors follow the log on their own (once each, three in all); by
default that model's vectors are made by a child process the worker starts and stops, and only
the principal's own messages are embedded."""

from __future__ import annotations

import re
from pathlib import Path

import asyncpg
import pytest
from pydantic import SecretStr

from engram.infra.settings import KeysSettings
from engram.ingest.producer import EpisodeProducer
from engram.ingest.topics import ensure_topics
from engram.keys.kek import new_kek_text
from engram.sealing.opening import open_sealer
from engram.watermarks.waiting import wait_for_watermarks
from tests.support.episodes import turn
from tests.support.http import first_ok, free_port
from tests.support.indexing import DEFAULT_GENERATION, embedded_to_the_end, indexed_to_the_end
from tests.support.isolation import Isolated, running_worker

pytestmark = pytest.mark.integration

WAIT_S = 90
TURNS = 12


def _sample(metrics: str, name: str) -> float:
    """The value of one sample (``name`` with its labels) in a Prometheus text page."""
    found = re.search(rf"^{re.escape(name)} (\S+)$", metrics, re.MULTILINE)
    assert found is not None, f"{name} not in the worker's metrics"
    return float(found.group(1))


LIGHT = "wordllama-l2_supercat/64/content-words-v1"
"""The generation a worker embeds into with the light local model at 64 dimensions."""


async def _run_sealed(
    isolated: Isolated, pool: asyncpg.Pool, tmp_path: Path, generation: str, **extra: str
) -> str:
    """TURNS sealed turns through one worker (``extra``: its environment), formed, indexed and
    embedded to the end of the log; the worker's /metrics page then."""
    kafka = isolated.kafka(partitions=2)
    await ensure_topics(kafka)
    kek = new_kek_text()
    port = free_port()
    env = isolated.env(partitions=2) | {
        "ENGRAM_KEYS_KEK": kek,
        "ENGRAM_KEYS_ENCRYPT_LOG": "true",
        "ENGRAM_WORKER_HTTP_PORT": str(port),
        **extra,
    }
    sealer = await open_sealer(KeysSettings(kek=SecretStr(kek), encrypt_log=True), pool)
    turns = [
        turn(isolated.tenant, f"u{n % 3}", f"proj{n % 8}", f"I keep {n} hives of bees.", seq=n)
        for n in range(TURNS)
    ]
    with running_worker(isolated, log_path=tmp_path / "worker.log", env=env):
        async with EpisodeProducer(kafka, sealer) as producer:
            positions = await producer.publish_many(turns)
        await wait_for_watermarks(pool, positions, timeout_s=WAIT_S)
        await indexed_to_the_end(kafka, pool, timeout_s=WAIT_S)
        await embedded_to_the_end(kafka, pool, generation, timeout_s=WAIT_S)
        return (await first_ok(f"http://127.0.0.1:{port}/metrics")).text


async def test_with_an_embedder_that_keeps_pace_one_follower_opens_each_turn_for_both(
    isolated: Isolated, pool: asyncpg.Pool, tmp_path: Path
) -> None:
    metrics = await _run_sealed(
        isolated,
        pool,
        tmp_path,
        LIGHT,
        ENGRAM_EMBEDDING_LOCAL_MODEL="wordllama",
        ENGRAM_EMBEDDING_DIMENSIONS="64",
    )
    follower = 'engram_follower_records_total{follower="messages+embeddings"}'
    assert _sample(metrics, follower) == TURNS, "one fetch and one decoding a turn, for both"
    assert 'engram_follower_records_total{follower="messages"}' not in metrics
    assert 'engram_follower_records_total{follower="embeddings"}' not in metrics
    opened = _sample(metrics, 'engram_sealed_opened_total{kind="event"}')
    assert opened == 2 * TURNS, "opened once by formation and once by the follower"
    assert _sample(metrics, "engram_messages_indexed_total") == TURNS
    assert _sample(metrics, "engram_messages_embedded_total") == TURNS


async def test_with_the_contextual_model_in_the_worker_the_vectors_follow_the_log_on_their_own(
    isolated: Isolated, pool: asyncpg.Pool, tmp_path: Path
) -> None:
    metrics = await _run_sealed(
        isolated, pool, tmp_path, DEFAULT_GENERATION, ENGRAM_EMBEDDING_IN_WORKER="true"
    )
    for follower in ("messages", "embeddings"):
        name = f'engram_follower_records_total{{follower="{follower}"}}'
        assert _sample(metrics, name) == TURNS, f"one fetch a turn for {follower}"
    assert 'engram_follower_records_total{follower="messages+embeddings"}' not in metrics
    opened = _sample(metrics, 'engram_sealed_opened_total{kind="event"}')
    assert opened == 3 * TURNS, "opened by formation, the index's follower and the vectors'"
    assert _sample(metrics, "engram_messages_indexed_total") == TURNS
    assert _sample(metrics, "engram_messages_embedded_total") == TURNS


def _children(pid: int) -> list[tuple[int, str]]:
    """The live child processes of ``pid`` (Linux ``/proc``), with their command lines."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            status = (entry / "status").read_text()
            command = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode()
        except OSError:
            continue
        parent = re.search(r"^PPid:\s+(\d+)$", status, re.MULTILINE)
        state = re.search(r"^State:\s+(\S)", status, re.MULTILINE)
        if parent and int(parent[1]) == pid and state and state[1] != "Z":
            found.append((int(entry.name), command))
    return found


async def test_by_default_the_worker_starts_and_stops_an_embedder_of_its_own(
    isolated: Isolated, pool: asyncpg.Pool, tmp_path: Path
) -> None:
    kafka = isolated.kafka(partitions=1)
    await ensure_topics(kafka)
    port = free_port()
    env = isolated.env(partitions=1) | {"ENGRAM_WORKER_HTTP_PORT": str(port)}
    turns = [
        turn(
            isolated.tenant,
            "ana",
            "p",
            f"I keep {n} hives.",
            "How lovely!",
            seq=n,
            roles=("user", "assistant"),
        )
        for n in range(3)
    ]
    with running_worker(isolated, log_path=tmp_path / "worker.log", env=env) as worker:
        async with EpisodeProducer(kafka) as producer:
            positions = await producer.publish_many(turns)
        await wait_for_watermarks(pool, positions, timeout_s=WAIT_S)
        await indexed_to_the_end(kafka, pool, timeout_s=WAIT_S)
        await embedded_to_the_end(kafka, pool, timeout_s=WAIT_S)
        [(child, command)] = [c for c in _children(worker.pid) if " embedder" in c[1]]
        assert "--nice 10" in command
        metrics = (await first_ok(f"http://127.0.0.1:{port}/metrics")).text
    assert not Path(f"/proc/{child}").exists() or _zombie_or_gone(child), "stopped with it"
    assert 'engram_follower_records_total{follower="embeddings"}' not in metrics
    assert _sample(metrics, 'engram_follower_records_total{follower="messages"}') == 3
    assert await pool.fetchval("SELECT count(*) FROM message") == 6, "both roles indexed"
    embedded = await pool.fetch("SELECT item_id FROM embedding_vector ORDER BY item_id")
    assert len(embedded) == 3 and all(r["item_id"].endswith(":0") for r in embedded), (
        "only the principal's own words are embedded"
    )


def _zombie_or_gone(pid: int) -> bool:
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return True
    state = re.search(r"^State:\s+(\S)", status, re.MULTILINE)
    return state is not None and state[1] in ("Z", "X")


@pytest.mark.parametrize(
    ("flag", "follower", "indexes", "embeds"),
    [("--no-embedder", "messages", True, False), ("--no-indexer", "embeddings", False, True)],
)
async def test_a_worker_without_one_sink_follows_the_log_for_the_other_alone(
    isolated: Isolated,
    pool: asyncpg.Pool,
    tmp_path: Path,
    flag: str,
    follower: str,
    indexes: bool,
    embeds: bool,
) -> None:
    kafka = isolated.kafka(partitions=1)
    await ensure_topics(kafka)
    port = free_port()
    env = isolated.env(partitions=1) | {
        "ENGRAM_WORKER_HTTP_PORT": str(port),
        "ENGRAM_EMBEDDING_IN_WORKER": "true",
    }
    turns = [turn(isolated.tenant, "ana", "p", f"I keep {n} hives.", seq=n) for n in range(3)]
    with running_worker(isolated, flag, log_path=tmp_path / "worker.log", env=env):
        async with EpisodeProducer(kafka) as producer:
            positions = await producer.publish_many(turns)
        await wait_for_watermarks(pool, positions, timeout_s=WAIT_S)
        if indexes:
            await indexed_to_the_end(kafka, pool, timeout_s=WAIT_S)
        if embeds:
            await embedded_to_the_end(kafka, pool, timeout_s=WAIT_S)
        metrics = (await first_ok(f"http://127.0.0.1:{port}/metrics")).text

    assert _sample(metrics, f'engram_follower_records_total{{follower="{follower}"}}') == 3
    assert await pool.fetchval("SELECT count(*) FROM message") == (3 if indexes else 0)
    assert await pool.fetchval("SELECT count(*) FROM embedding_vector") == (3 if embeds else 0)
