"""Re-derivation: the log formed again under another policy into a shadow generation, compared
by content, promoted atomically; corrections and tombstones survive it, a killed replay resumes
to the same digest. Real Kafka, real PostgreSQL, real `engram` processes."""

from __future__ import annotations

import asyncio
import subprocess
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import asyncpg
import orjson
import pytest
import yaml

from engram.formation.vocabulary import RELATIONS
from engram.generations.reading import reading
from engram.generations.registry import (
    Generation,
    find_generation,
    pin_policy,
    promote,
    register_generation,
)
from engram.generations.runtime import generation_kafka, generation_lag
from engram.generations.schema import create_generation_schema
from engram.infra.db import create_pool
from engram.infra.settings import DatabaseSettings
from engram.ingest.producer import EpisodeProducer
from engram.ingest.topics import ensure_topics
from engram.projections.beliefs.digest import projection_digest
from engram.projections.reads.queries import list_beliefs
from engram.schemas.api import LogPosition
from engram.schemas.corrections import CorrectionKind
from engram.schemas.episodes import TurnAppended
from engram.service.corrections import Corrections
from engram.watermarks.waiting import wait_for_watermarks
from tests.fakes.model_scripts import echo_model
from tests.fakes.openai_server import FakeOpenAIServer
from tests.support.conditions import wait_until
from tests.support.episodes import turn
from tests.support.isolation import REPO, Isolated, running_engram, running_worker
from tests.support.model_env import model_worker_env
from tests.support.projecting import city_batches, project_all

pytestmark = pytest.mark.integration

WAIT_S = 120
DISABLED = "works_at"


def policy_without(tmp_path: Path, relation: str) -> Path:
    path = tmp_path / f"without-{relation}.yaml"
    enabled = [r.name for r in RELATIONS if r.name != relation]
    path.write_text(yaml.safe_dump({"relations": {"enabled": enabled}}))
    return path


def default_policy_file(tmp_path: Path) -> Path:
    path = tmp_path / "default.yaml"
    path.write_text("{}\n")
    return path


async def say(isolated: Isolated, pool: asyncpg.Pool, *turns: TurnAppended) -> None:
    """Append turns and wait until the live generation has formed them."""
    async with EpisodeProducer(isolated.kafka(partitions=1)) as producer:
        appended: list[LogPosition] = await producer.publish_many(list(turns))
    await wait_for_watermarks(pool, appended, timeout_s=WAIT_S)


def engram(isolated: Isolated, *argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "engram", *argv],
        cwd=REPO,
        env=isolated.env(partitions=1),
        capture_output=True,
        text=True,
        timeout=120,
    )


async def generation_for(pool: asyncpg.Pool, kind: str = "g") -> Generation:
    gid = await pool.fetchval(
        "SELECT generation_id FROM generation WHERE generation_id LIKE $1 || '%' "
        "AND generation_id <> 'public' ORDER BY created_at DESC LIMIT 1",
        kind,
    )
    return await find_generation(pool, gid)


async def caught_up(isolated: Isolated, pool: asyncpg.Pool, generation: Generation) -> bool:
    kafka = generation_kafka(isolated.kafka(partitions=1), generation)
    lag = await generation_lag(kafka, pool, generation.schema_name)
    return lag.head > 0 and lag.caught_up


async def objects(
    db: asyncpg.Pool, tenant: str, principal: str, generation: str | None = None
) -> list[tuple[str, str]]:
    async with reading(db, generation) as conn:
        beliefs = await list_beliefs(conn, tenant=tenant, principal=principal)
    return sorted((b.relation, b.object) for b in beliefs)


@pytest.fixture
async def live(isolated: Isolated, pool: asyncpg.Pool, tmp_path: Path) -> AsyncIterator[Isolated]:
    """A live worker on this test's topics, one partition each."""
    await ensure_topics(isolated.kafka(partitions=1))
    with running_worker(isolated, log_path=tmp_path / "worker.log", env=isolated.env(partitions=1)):
        yield isolated


async def test_a_policy_without_one_relation_removes_exactly_its_beliefs_and_promote_switches(
    live: Isolated, pool: asyncpg.Pool, tmp_path: Path
) -> None:
    t = live.tenant
    await say(
        live,
        pool,
        turn(t, "ana", "p", "I live in Lisbon.", seq=0),
        turn(t, "ana", "p", "I work at Acme Robotics.", seq=1),
        turn(t, "ana", "p", "I have a bike.", seq=2),
        turn(t, "ana", "p", "I use Vim.", seq=3),
        turn(t, "bob", "q", "I work at Initech. I prefer dark mode.", seq=4),
    )
    service = Corrections(pool, live.kafka(partitions=1))
    by_object = {b.object: b for b in await list_beliefs(pool, tenant=t, principal="ana")}
    rejected = await service.correct(
        tenant=t, principal="ana", belief_id=by_object["bike"].belief_id, kind=CorrectionKind.UNTRUE
    )
    deleted = await service.delete(tenant=t, principal="ana", belief_id=by_object["Vim"].belief_id)
    await wait_for_watermarks(pool, [rejected, deleted], timeout_s=WAIT_S)
    before = await objects(pool, t, "ana")
    assert ("works_at", "Acme Robotics") in before and ("owns", "bike") not in before

    policy = policy_without(tmp_path, DISABLED)
    log_path = tmp_path / "rederive.log"
    with running_engram(
        live, "rederive", "--policy", str(policy), log_path=log_path, env=live.env(partitions=1)
    ):
        await wait_until(_registered(pool), timeout_s=WAIT_S, what="generation registered")
        generation = await generation_for(pool)
        # Live ingest during the replay: formed in both generations.
        await say(live, pool, turn(t, "bob", "q", "I speak Portuguese.", seq=5))

        async def shadow_done() -> bool:
            return await caught_up(live, pool, generation)

        await wait_until(shadow_done, timeout_s=WAIT_S, what="shadow generation caught up")
        gid = generation.generation_id
        assert ("speaks", "Portuguese") in await objects(pool, t, "bob", gid)
        assert ("speaks", "Portuguese") in await objects(pool, t, "bob")

        diff = engram(live, "generations", "diff", "public", gid, "--json")
        assert diff.returncode == 0, diff.stderr
        found = orjson.loads(diff.stdout)
        assert sorted((b["principal"], b["relation"]) for b in found["removed"]) == [
            ("ana", DISABLED),
            ("bob", DISABLED),
        ]
        assert found["added"] == [] and found["changed"] == []

        promoted = engram(live, "generations", "promote", gid, "--confirm")
        assert promoted.returncode == 0, promoted.stderr + promoted.stdout

    after = await objects(pool, t, "ana")
    assert after == [r for r in before if r[0] != DISABLED]
    assert all(relation != DISABLED for relation, _ in await objects(pool, t, "bob"))
    assert ("owns", "bike") not in after, "the rejected belief did not return"
    assert ("uses", "Vim") not in after, "the deleted belief did not return"
    async with reading(pool) as conn:
        tombstones = await conn.fetchval("SELECT count(*) FROM belief_tombstone")
    assert tombstones == 1
    listed = engram(live, "generations", "list", "--json")
    statuses = {g["generation"]: g["status"] for g in orjson.loads(listed.stdout)}
    assert statuses == {"public": "following", gid: "live"}


def _registered(pool: asyncpg.Pool) -> Any:
    """A generation is registered and its schema made: `engram rederive` registers it first and
    creates its tables next, in a transaction of their own."""

    async def check() -> bool:
        count = await pool.fetchval(
            "SELECT count(*) FROM generation WHERE generation_id <> 'public' "
            "AND to_regclass(schema_name || '.projector_offset') IS NOT NULL"
        )
        return bool(count)

    return check


async def test_a_worker_whose_policy_differs_from_its_generation_refuses_to_start(
    isolated: Isolated, pool: asyncpg.Pool, tmp_path: Path
) -> None:
    await pin_policy(pool, "some-other-policy", "{}")
    await ensure_topics(isolated.kafka(partitions=1))
    refused = engram(isolated, "worker")
    assert refused.returncode == 2
    assert "engram rederive" in refused.stderr


async def test_a_replay_killed_three_times_resumes_to_the_digest_of_an_uninterrupted_one(
    isolated: Isolated, pool: asyncpg.Pool, tmp_path: Path
) -> None:
    kafka = isolated.kafka(partitions=1)
    await ensure_topics(kafka)
    t = isolated.tenant
    cities = ["Lisbon", "Porto", "Oslo", "Riga"]
    turns = [
        turn(t, f"p{i % 5}", f"proj{i % 3}", f"I live in {cities[i % 4]}. I use Tool{i}.", seq=i)
        for i in range(400)
    ]
    async with EpisodeProducer(kafka) as producer:
        await producer.publish_many(turns)
    policy = str(default_policy_file(tmp_path))
    uninterrupted = engram(isolated, "rederive", "--policy", policy, "--until-caught-up")
    assert uninterrupted.returncode == 0, uninterrupted.stdout + uninterrupted.stderr
    generation = await generation_for(pool)
    expected = await _digest(isolated, generation)
    assert engram(isolated, "generations", "drop", generation.generation_id).returncode == 0

    killed_at: list[int] = []
    for point in (1, 120, 260):
        log_path = tmp_path / f"killed-{point}.log"
        with running_engram(
            isolated,
            "rederive",
            "--policy",
            policy,
            log_path=log_path,
            env=isolated.env(partitions=1),
        ) as job:
            rebuilt = await find_generation(pool, generation.generation_id)

            async def reached(at: int = point, g: Generation = rebuilt) -> bool:
                return await _runs(pool, g) >= at

            await wait_until(reached, timeout_s=WAIT_S, what=f"{point} episodes projected")
            job.kill()  # SIGKILL: no shutdown, no commit
            job.wait()
            killed_at.append(await _runs(pool, rebuilt))
    if killed_at[-1] < len(turns):
        lagging = engram(isolated, "generations", "promote", generation.generation_id, "--confirm")
        assert lagging.returncode == 2 and "lags the log" in lagging.stderr
    finished = engram(isolated, "rederive", "--policy", policy, "--until-caught-up")
    assert finished.returncode == 0, finished.stdout + finished.stderr
    assert killed_at[0] < len(turns), f"killed mid-replay at {killed_at} of {len(turns)}"
    rebuilt = await find_generation(pool, generation.generation_id)
    assert rebuilt.build == 2
    assert await _digest(isolated, rebuilt) == expected


def _more_than(seen: list[Any], count: int) -> Any:
    return lambda: len(seen) > count


async def _runs(pool: asyncpg.Pool, generation: Generation) -> int:
    try:
        return int(
            await pool.fetchval(
                f'SELECT count(*) FROM "{generation.schema_name}".consolidation_run'
            )
        )
    except asyncpg.UndefinedTableError:
        return 0


async def _digest(isolated: Isolated, generation: Generation) -> str:
    database = DatabaseSettings(url=isolated.database_url)
    pool = await create_pool(database, schema=generation.schema_name)
    try:
        return await projection_digest(pool)
    finally:
        await pool.close()


async def test_a_reader_in_a_tight_loop_during_promote_sees_one_generation_or_the_other(
    isolated: Isolated, kafka: Any, pool: asyncpg.Pool
) -> None:
    batches = city_batches(isolated.tenant, 6)
    await project_all(kafka, pool, batches)
    shadow = await register_generation(pool, policy_version="shadow", policy_yaml="{}")
    async with pool.acquire() as conn:
        await create_generation_schema(conn, shadow.schema_name)
    database = DatabaseSettings(url=isolated.database_url)
    shadow_pool = await create_pool(database, schema=shadow.schema_name)
    try:
        shadow_kafka = generation_kafka(kafka, shadow)
        await ensure_topics(shadow_kafka)
        await project_all(shadow_kafka, shadow_pool, batches[:3])
    finally:
        await shadow_pool.close()
    a = await objects(pool, isolated.tenant, "p0", "public")
    b = await objects(pool, isolated.tenant, "p0", shadow.generation_id)
    assert a != b

    seen: list[list[tuple[str, str]]] = []
    done = asyncio.Event()

    async def read_in_a_loop() -> None:
        while not done.is_set():
            seen.append(await objects(pool, isolated.tenant, "p0"))

    reader = asyncio.create_task(read_in_a_loop())
    async with pool.acquire() as conn:
        for target in (shadow.generation_id, "public", shadow.generation_id):
            await wait_until(lambda: len(seen) > 0, timeout_s=10, what="reader running")
            count = len(seen)
            await promote(conn, target)
            await wait_until(_more_than(seen, count + 5), timeout_s=10, what="reads after")
    done.set()
    await reader
    assert {tuple(s) for s in seen} == {tuple(a), tuple(b)}
    assert await objects(pool, isolated.tenant, "p0") == b


async def test_a_generation_built_for_one_principal_forms_only_theirs_and_serves_only_them(
    live: Isolated, pool: asyncpg.Pool, tmp_path: Path
) -> None:
    t = live.tenant
    await say(
        live,
        pool,
        turn(t, "ana", "p", "I live in Lisbon. I use Vim.", seq=0),
        turn(t, "bob", "p", "I live in Oslo. I use Emacs.", seq=1),
        turn(t, "ana", "p", "I prefer dark mode.", seq=2),
    )
    policy = str(policy_without(tmp_path, "uses"))
    plan = engram(live, "rederive", "--policy", policy, "--principal", "ana", "--dry-run")
    assert plan.returncode == 0 and "would create generation" in plan.stdout, plan.stderr
    assert await pool.fetchval("SELECT count(*) FROM generation") == 1, "a dry run builds nothing"
    built = engram(live, "rederive", "--policy", policy, "--principal", "ana", "--until-caught-up")
    assert built.returncode == 0, built.stdout + built.stderr
    generation = await generation_for(pool)
    assert generation.principals == ("ana",)
    gid = generation.generation_id
    ana_live = await objects(pool, t, "ana")
    assert await objects(pool, t, "ana", gid) == [r for r in ana_live if r[0] != "uses"]
    assert await objects(pool, t, "bob", gid) == []
    async with reading(pool, gid) as conn:
        backlog = await conn.fetch("SELECT state FROM formation_backlog")
    assert [row["state"] for row in backlog] == ["formed"] * 3, "others recorded as formed"

    diff = engram(live, "generations", "diff", "public", gid, "--principal", "ana", "--json")
    found = orjson.loads(diff.stdout)
    assert [(b["principal"], b["relation"]) for b in found["removed"]] == [("ana", "uses")]
    promoted = engram(live, "generations", "promote", gid, "--confirm")
    assert promoted.returncode == 0, promoted.stderr + promoted.stdout

    # Ana opted in: her readers read the new generation; Bob keeps the live one.
    async with reading(pool, principal=(t, "ana")) as conn:
        ana_now = await list_beliefs(conn, tenant=t, principal="ana")
    async with reading(pool, principal=(t, "bob")) as conn:
        bob_now = await list_beliefs(conn, tenant=t, principal="bob")
    assert sorted((b.relation, b.object) for b in ana_now) == [
        r for r in ana_live if r[0] != "uses"
    ]
    assert ("uses", "Emacs") in [(b.relation, b.object) for b in bob_now]
    shown = engram(live, "beliefs", "list", "--tenant", t, "--principal", "ana", "--json")
    assert "Vim" not in shown.stdout and "Lisbon" in shown.stdout, shown.stderr
    listed = engram(live, "generations", "list", "--json")
    statuses = {g["generation"]: g["status"] for g in orjson.loads(listed.stdout)}
    assert statuses == {"public": "live", gid: "serving"}


def model_policy(tmp_path: Path, server: FakeOpenAIServer, name: str, **thresholds: float) -> Path:
    path = tmp_path / f"{name}.yaml"
    document: dict[str, Any] = {
        "extractor": {"kind": "model"},
        "model": {"name": "fake-model", "origin": server.origin},
    }
    if thresholds:
        document["thresholds"] = thresholds
    path.write_text(yaml.safe_dump(document))
    return path


async def rederive_to_head(
    isolated: Isolated, env: dict[str, str], policy: Path, log_path: Path
) -> None:
    """`engram rederive --until-caught-up` without blocking this loop (the fake model runs
    on it)."""
    argv = ("rederive", "--policy", str(policy), "--until-caught-up")
    with running_engram(isolated, *argv, log_path=log_path, env=env) as job:
        await wait_until(lambda: job.poll() is not None, timeout_s=WAIT_S, what="rederive done")
    assert job.returncode == 0, log_path.read_text()


async def test_a_second_rederivation_that_changes_only_a_threshold_asks_the_model_nothing(
    isolated: Isolated,
    pool: asyncpg.Pool,
    openai_server: FakeOpenAIServer,
    tmp_path: Path,
) -> None:
    openai_server.script = echo_model()
    kafka = isolated.kafka(partitions=1)
    await ensure_topics(kafka)
    t = isolated.tenant
    turns = [
        turn(t, "ana", "p", "I live in Lisbon.", seq=0),
        turn(t, "ana", "p", "I use Vim. I prefer dark mode.", seq=1),
        turn(t, "bob", "p", "I live in Oslo.", seq=2),
    ]
    async with EpisodeProducer(kafka) as producer:
        await producer.publish_many(turns)
    env = model_worker_env(isolated.env(partitions=1), openai_server)

    first = model_policy(tmp_path, openai_server, "first")
    await rederive_to_head(isolated, env, first, tmp_path / "first.log")
    asked = len(openai_server.requests)
    assert asked == len(turns)
    second = model_policy(tmp_path, openai_server, "second", inferred_confidence_cap=0.5)
    await rederive_to_head(isolated, env, second, tmp_path / "second.log")
    assert len(openai_server.requests) == asked, "every answer came from a receipt"
    generation = await generation_for(pool)
    assert ("lives_in", "Lisbon") in await objects(pool, t, "ana", generation.generation_id)
    assert await pool.fetchval("SELECT count(*) FROM model_receipt") == len(turns)

    await Corrections(pool, kafka).forget(tenant=t, principal="ana")
    await rederive_to_head(isolated, env, second, tmp_path / "forgotten.log")
    receipts = await pool.fetch("SELECT DISTINCT principal FROM model_receipt")
    assert [row["principal"] for row in receipts] == ["bob"], "forgetting erased ana's receipts"
    for table in ("model_attempt", "session_message"):
        kept = await pool.fetch(f"SELECT DISTINCT principal FROM {table}")
        assert [row["principal"] for row in kept] == ["bob"], f"forgetting erased ana's {table}"
