"""The hostile-input suite: a seeded mix of hostile input through the real doors and straight
onto the topics, hidden among valid turns, against a running worker and API on real Kafka and
PostgreSQL.

Afterwards the worker (formation and projector) and the API never exited; every input is
accounted for — formed, refused by formation, parked, dead-lettered, set aside or refused at its
door, each with its reason; and the projection of the valid inputs equals that of a clean run
fed only them, tenant by tenant, so no tenant's memory changed because of another's input.

The two projections are compared by content: whole rows, less the log positions they cite
(``source_topic``, ``source_partition``, ``source_offset``), since the hostile records occupy
offsets between the valid ones in the first run and nowhere in the second. Every identity and
every decision of formation and resolution comes from an episode's content and event time, not
its offset, so the rest must be byte-identical.

Size: ``ENGRAM_HOSTILE_INPUTS`` hostile inputs (150 in ``make test``; ``make hostile`` runs
2,000 and writes the tally to ``ENGRAM_HOSTILE_REPORT``, the numbers in docs/reliability.md);
``ENGRAM_HOSTILE_SEED`` picks the mix.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
from collections import Counter
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path

import asyncpg
import httpx
import orjson
import pytest
from aiokafka import AIOKafkaConsumer, AIOKafkaProducer
from typer.testing import CliRunner

from engram.cli import app as engram_cli
from engram.formation.core import form_episode
from engram.formation.policy import FormationPolicy
from engram.formation.proposals import Proposal
from engram.infra.settings import KafkaSettings
from engram.ingest.producer import EpisodeProducer
from engram.ingest.topics import ensure_topics
from engram.projections.beliefs.digest import PROJECTED_TABLES
from engram.projections.beliefs.integrity import check_links
from engram.schemas.claims import SourcePosition
from engram.schemas.common import episode_key, principal_key
from engram.service.tokens import create_token
from tests.support.conditions import wait_until
from tests.support.databases import create_database, drop_database
from tests.support.episodes import turn
from tests.support.hostile import Input, Mix, generate
from tests.support.http import first_ok, free_port
from tests.support.isolation import (
    Isolated,
    delete_topics,
    new_prefix,
    running_engram,
    running_worker,
)
from tests.support.services import Services

pytestmark = pytest.mark.integration

HOSTILE = int(os.environ.get("ENGRAM_HOSTILE_INPUTS", "150"))
SEED = int(os.environ.get("ENGRAM_HOSTILE_SEED", "25"))
VALID = 60
WAIT_S = 180
POSITIONS = ("source_topic", "source_partition", "source_offset")


@dataclass
class Outcome:
    input: Input
    status: str = "unaccounted"
    where: tuple[int, int] | None = None
    """(partition, offset) on the episodes topic, once appended."""


async def content_digest(pool: asyncpg.Pool, *, tenant: str | None = None) -> str:
    """:func:`engram.projections.beliefs.digest.projection_digest` without the log positions rows cite."""
    await check_links(pool, tenant=tenant)
    digest = hashlib.sha256()
    strip = " - ".join(f"'{column}'" for column in POSITIONS)
    for table, key in PROJECTED_TABLES:
        order = ", ".join(f"t.{column}" for column in key)
        where = "WHERE t.tenant = $1" if tenant is not None else "WHERE $1::text IS NULL"
        rows = await pool.fetch(
            f"SELECT (to_jsonb(t) - {strip})::text AS row FROM {table} t {where} ORDER BY {order}",
            tenant,
        )
        digest.update(table.encode())
        for row in rows:
            digest.update(row["row"].encode())
    return digest.hexdigest()


def _poisoned_claims(carrier: Input) -> tuple[bytes, bytes]:
    """A claims batch PostgreSQL refuses (a NUL in its quote), as a producer that writes where
    only the formation agent should would write it."""
    episode = turn(carrier.tenant, "ana", carrier.project, "I live in Lisbon.", seq=7)
    proposal = Proposal("I", "lives_in", "Lisbon", "I live in Lisbon", "assert", "present", "t")
    source = SourcePosition(topic="elsewhere", partition=0, offset=0)
    batch = form_episode(episode, FormationPolicy(), {0: [proposal]}, source=source)
    value = orjson.dumps(batch.model_dump(mode="json")).replace(b"Lisbon", b"Lis\\u0000bon")
    return principal_key(batch.tenant, batch.principal), value


async def _dead_letters(kafka: KafkaSettings, want: int) -> list[dict[str, str]]:
    consumer = AIOKafkaConsumer(
        kafka.dlq_topic, bootstrap_servers=kafka.bootstrap, auto_offset_reset="earliest"
    )
    await consumer.start()
    found: list[dict[str, str]] = []
    try:

        async def enough() -> bool:
            for records in (await consumer.getmany(timeout_ms=500)).values():
                found.extend({k: v.decode() for k, v in r.headers} for r in records)
            return len(found) >= want

        await wait_until(enough, timeout_s=WAIT_S, what=f"{want} dead letters")
    finally:
        await consumer.stop()
    return found


@contextmanager
def _services(isolated: Isolated, tmp_path: Path, port: int) -> Iterator[list[object]]:
    env = {**isolated.env(), "ENGRAM_API_PORT": str(port)}
    with ExitStack() as stack:
        api = stack.enter_context(
            running_engram(isolated, "api", log_path=tmp_path / "api.log", env=env)
        )
        worker = stack.enter_context(running_worker(isolated, log_path=tmp_path / "worker.log"))
        yield [api, worker]


def _ingest(isolated: Isolated, path: Path) -> tuple[int, str]:
    """``engram ingest PATH`` through the command itself (in this process: typer's runner)."""
    result = CliRunner().invoke(engram_cli, ["ingest", str(path)], env=isolated.env())
    return result.exit_code, result.output.replace("\n", "")  # rich wraps at its width


async def _send(
    mix: Mix,
    isolated: Isolated,
    kafka: KafkaSettings,
    url: str,
    tokens: dict[str, str],
    tmp_path: Path,
) -> list[Outcome]:
    outcomes = [Outcome(item) for item in [*mix.valid, *mix.hostile]]
    order = sorted(
        outcomes, key=lambda o: hashlib.sha256(o.input.body + o.input.kind.encode()).digest()
    )
    ingest_valid = [o for o in order if o.input.door == "ingest" and o.input.expected == "forms"]
    producer = AIOKafkaProducer(bootstrap_servers=kafka.bootstrap, enable_idempotence=True)
    await producer.start()
    foreign = next(iter(tokens.values()))
    try:
        async with httpx.AsyncClient(base_url=url, timeout=60) as http:
            for index, outcome in enumerate(order):
                item = outcome.input
                if item.door == "http":
                    token = tokens.get(item.tenant, foreign)
                    if item.kind == "other_tenants_token":
                        token = next(t for name, t in tokens.items() if name != item.tenant)
                    answer = await http.post(
                        "/v1/turns",
                        content=item.body,
                        headers={
                            "Authorization": f"Bearer {token}",
                            "Content-Type": "application/json",
                        },
                    )
                    if answer.status_code == 202:
                        [where] = answer.json()["appended"]
                        outcome.where = (where["partition"], where["offset"])
                        outcome.status = "appended"
                    else:
                        assert answer.status_code < 500, (
                            item.kind,
                            answer.status_code,
                            answer.text,
                        )
                        outcome.status = f"refused_http_{answer.status_code}"
                elif item.door == "log":
                    sent = await producer.send_and_wait(
                        kafka.episodes_topic, item.body, key=episode_key(item.tenant, item.project)
                    )
                    outcome.where = (sent.partition, sent.offset)
                    outcome.status = "appended"
                elif item.door == "claims":
                    key, value = _poisoned_claims(item)
                    await producer.send_and_wait(kafka.claims_topic, value, key=key)
                    outcome.status = "sent_to_claims"
                elif item.expected == "refused":
                    path = tmp_path / f"hostile-{index}.jsonl"
                    path.write_bytes(item.body + b"\n")
                    code, said = await asyncio.to_thread(_ingest, isolated, path)
                    assert code == 2 and f"{path.name}:1" in said, (item.kind, code, said)
                    outcome.status = "refused_ingest"
    finally:
        await producer.stop()
    path = tmp_path / "valid.jsonl"
    path.write_bytes(b"".join(o.input.body + b"\n" for o in ingest_valid))
    code, said = await asyncio.to_thread(_ingest, isolated, path)
    assert code == 0, said
    return outcomes


async def _formed(pool: asyncpg.Pool, topic: str, outcomes: list[Outcome]) -> None:
    """Wait until formation has read every valid episode (each is a row of the backlog; the
    dead-lettered never are) and none is still open: each formed or parked."""
    valid = sum(1 for o in outcomes if o.input.episode is not None)

    async def caught_up() -> bool:
        row = await pool.fetchrow(
            "SELECT count(*) AS read, count(*) FILTER (WHERE state IN ('pending', 'requeued')) "
            "AS open FROM formation_backlog WHERE topic = $1",
            topic,
        )
        assert row is not None
        return bool(row["read"] >= valid and row["open"] == 0)

    await wait_until(caught_up, timeout_s=WAIT_S, what="every valid episode formed or parked")


async def _account(pool: asyncpg.Pool, kafka: KafkaSettings, outcomes: list[Outcome]) -> None:
    """Give every input its outcome, with its reason; fail on any left unaccounted."""
    expected_letters = sum(
        1 for o in outcomes if o.input.door in ("log", "claims") and o.input.expected != "forms"
    )
    letters = await _dead_letters(kafka, expected_letters)
    by_position = {
        (int(h["engram.source.partition"]), int(h["engram.source.offset"])): h["engram.reason"]
        for h in letters
        if h["engram.source.topic"] == kafka.episodes_topic
    }
    set_aside = [h for h in letters if h["engram.reason"] == "unprojectable"]
    claims = [o for o in outcomes if o.input.door == "claims"]
    assert len(set_aside) == len(claims), "every poisoned claims batch set aside, once"
    for outcome in claims:
        outcome.status = "set_aside"
    backlog = {
        (r["partition"], r["offset"]): (r["state"], r["failure_kind"])
        for r in await pool.fetch(
            'SELECT partition, "offset", state, failure_kind FROM formation_backlog '
            "WHERE topic = $1",
            kafka.episodes_topic,
        )
    }
    for outcome in outcomes:
        if outcome.where is None:
            continue
        if outcome.where in by_position:
            outcome.status = f"dead_lettered_{by_position[outcome.where]}"
        elif outcome.where in backlog:
            state, kind = backlog[outcome.where]
            outcome.status = "formed" if state == "formed" else f"{state}_{kind}"
    for outcome in outcomes:
        episode = outcome.input.episode
        if episode is not None and outcome.status == "unaccounted":  # the ingested file's
            row = await pool.fetchrow(
                "SELECT state, failure_kind FROM formation_backlog WHERE topic = $1 AND "
                "tenant = $2 AND project = $3 AND episode_id = $4 LIMIT 1",
                kafka.episodes_topic,
                episode.tenant,
                episode.project,
                episode.event_id,
            )
            if row is not None:
                outcome.status = (
                    "formed"
                    if row["state"] == "formed"
                    else f"{row['state']}_{row['failure_kind']}"
                )
    left = [
        (o.input.kind, o.input.door, o.status)
        for o in outcomes
        if o.status in ("unaccounted", "appended")
    ]
    assert not left, f"inputs with no recorded outcome: {left}"
    wrong = [
        (o.input.kind, o.input.door, o.status)
        for o in outcomes
        if (o.input.expected == "refused" and not o.status.startswith("refused"))
        or (o.input.expected == "dead_lettered" and not o.status.startswith("dead_lettered"))
        or (o.input.expected == "forms" and o.status.startswith(("refused", "dead_lettered")))
    ]
    assert not wrong, f"inputs with another outcome than expected: {wrong}"


async def _every_valid_episode_has_its_run(pool: asyncpg.Pool, outcomes: list[Outcome]) -> None:
    """Each valid episode that formed has a run of its own tenant and principal: an event id
    that another tenant, principal or project also used erased nothing."""
    for outcome in outcomes:
        episode = outcome.input.episode
        if episode is None or outcome.status != "formed":
            continue
        runs = await pool.fetchval(
            "SELECT count(*) FROM consolidation_run WHERE tenant = $1 AND principal = $2 "
            "AND project = $3 AND episode_id = $4",
            episode.tenant,
            episode.principal,
            episode.project,
            episode.event_id,
        )
        assert runs == 1, (outcome.input.kind, episode.tenant, episode.principal, runs)


async def _clean_run(
    services: Services, mix: Mix, tmp_path: Path
) -> tuple[asyncpg.Pool, str, Isolated]:
    """The valid inputs alone, appended straight to a log of their own and formed."""
    name = f"engram_{new_prefix()}"
    url = await create_database(services.database_url, name)
    clean = Isolated(new_prefix(), services.bootstrap, url)
    kafka = clean.kafka()
    await ensure_topics(kafka)
    episodes = [i.episode for i in mix.valid if i.episode is not None]
    async with EpisodeProducer(kafka) as producer:
        await producer.publish_many(episodes)
    pool = await asyncpg.create_pool(url, min_size=1, max_size=4)
    assert pool is not None
    with running_worker(clean, log_path=tmp_path / "clean-worker.log") as worker:
        await _formed(pool, kafka.episodes_topic, [Outcome(i) for i in mix.valid])
        assert worker.poll() is None
    return pool, name, clean


async def test_hostile_input_never_stops_the_stream_and_changes_no_valid_memory(
    isolated: Isolated, services: Services, pool: asyncpg.Pool, tmp_path: Path
) -> None:
    kafka = isolated.kafka()
    await ensure_topics(kafka)
    tenants = [f"{isolated.tenant}-{suffix}" for suffix in ("a", "b", "c")]
    mix = generate(
        seed=SEED,
        hostile_count=HOSTILE,
        valid_count=VALID,
        tenants=tenants,
        max_event_bytes=isolated.max_event_bytes,
    )
    tokens = {t: (await create_token(pool, tenant=t, principal=None))[1] for t in tenants}
    port = free_port()
    with _services(isolated, tmp_path, port) as processes:
        await first_ok(f"http://127.0.0.1:{port}/healthz")
        outcomes = await _send(mix, isolated, kafka, f"http://127.0.0.1:{port}", tokens, tmp_path)
        await _formed(pool, kafka.episodes_topic, outcomes)
        await _account(pool, kafka, outcomes)
        exits = [p.poll() for p in processes]  # type: ignore[attr-defined]
        assert exits == [None, None], f"the API and the worker kept running: {exits}"
    await _every_valid_episode_has_its_run(pool, outcomes)

    clean, name, clean_names = await _clean_run(services, mix, tmp_path)
    try:
        assert await content_digest(pool) == await content_digest(clean)
        for tenant in tenants:
            assert await content_digest(pool, tenant=tenant) == await content_digest(
                clean, tenant=tenant
            ), f"{tenant}'s memory is what its valid input alone makes"
    finally:
        await clean.close()
        await drop_database(services.database_url, name)
        await delete_topics(services.bootstrap, clean_names.prefix)

    tally = Counter((o.input.kind, o.input.door, o.status) for o in outcomes)
    report = {
        "seed": SEED,
        "inputs": len(outcomes),
        "valid": len(mix.valid),
        "hostile": len(mix.hostile),
        "by_door": dict(Counter(o.input.door for o in outcomes)),
        "by_outcome": dict(Counter(o.status for o in outcomes)),
        "by_kind": {
            f"{kind} via {door}": {
                status: n for (k, d, status), n in tally.items() if (k, d) == (kind, door)
            }
            for kind, door in sorted({(o.input.kind, o.input.door) for o in outcomes})
        },
        "process_exits": 0,
        "digest_equal": True,
    }
    destination = os.environ.get("ENGRAM_HOSTILE_REPORT")
    if destination:
        Path(destination).write_text(json.dumps(report, indent=2, sort_keys=True) + "\n")
    print(json.dumps({k: report[k] for k in ("inputs", "valid", "hostile", "by_outcome")}))
