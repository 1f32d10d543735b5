"""Erasure that reaches the log (issue 26): with log encryption on, a person's words are sealed
on every topic; forgetting them destroys their key, after which no topic, no table and no
replay holds or forms their words — and everyone else's memory is untouched. Real Kafka, real
PostgreSQL, real worker processes, and a plain consumer with no Engram code to read the topics."""

from __future__ import annotations

import hashlib
import signal
import subprocess
import sys
from collections.abc import AsyncIterator, Awaitable
from pathlib import Path

import asyncpg
import pytest
from pydantic import SecretStr

from engram.infra.settings import KafkaSettings, KeysSettings
from engram.ingest.producer import EpisodeProducer
from engram.ingest.topics import ensure_topics
from engram.keys.kek import new_kek_text
from engram.projections.beliefs.digest import drop_projections, projection_digest
from engram.projections.reads.queries import list_beliefs
from engram.schemas.api import LogPosition
from engram.schemas.corrections import CorrectionKind
from engram.schemas.episodes import TurnAppended
from engram.sealing.events import Sealer
from engram.sealing.opening import open_sealer
from engram.service.corrections import Corrections
from engram.service.erasures import Erasures
from engram.watermarks.waiting import wait_for_watermarks
from tests.support.broker_files import files_holding, local_log_dirs, topic_files
from tests.support.conditions import wait_until
from tests.support.episodes import turn
from tests.support.indexing import (
    embedded_to_the_end,
    indexed_to_the_end,
    vectors_in_dump,
    vectors_of,
)
from tests.support.isolation import REPO, Isolated, running_worker
from tests.support.leftovers import every_record, pg_dump_text

pytestmark = pytest.mark.integration

WAIT_S = 90
KEK = new_kek_text()
SECRETS = ("zanzibar", "quixotically", "marmalade", "hepplewhite")
"""Words only Ana says (or corrects to): none may survive her forgetting, anywhere."""


def _encrypted_env(isolated: Isolated, kek: str = KEK, **kafka: object) -> dict[str, str]:
    return isolated.env(partitions=1, **kafka) | {
        "ENGRAM_KEYS_KEK": kek,
        "ENGRAM_KEYS_ENCRYPT_LOG": "true",
    }


class SealedMemory:
    def __init__(
        self, isolated: Isolated, kafka: KafkaSettings, pool: asyncpg.Pool, sealer: Sealer
    ) -> None:
        self.isolated, self.kafka, self.pool, self.sealer = isolated, kafka, pool, sealer
        self.service = Corrections(pool, kafka, sealer=sealer)
        self.positions: list[LogPosition] = []

    async def say(self, *turns: TurnAppended) -> None:
        async with EpisodeProducer(self.kafka, self.sealer) as producer:
            await self.formed(await producer.publish_many(turns))

    async def formed(self, positions: list[LogPosition]) -> None:
        self.positions += positions
        await wait_for_watermarks(self.pool, positions, timeout_s=WAIT_S)
        await indexed_to_the_end(self.kafka, self.pool, timeout_s=WAIT_S)

    async def objects(self, principal: str) -> list[str]:
        beliefs = await list_beliefs(
            self.pool, tenant=self.isolated.tenant, principal=principal, include_all=True
        )
        return sorted(b.object for b in beliefs)


@pytest.fixture
async def memory(
    isolated: Isolated, pool: asyncpg.Pool, tmp_path: Path
) -> AsyncIterator[SealedMemory]:
    kafka = isolated.kafka(partitions=1)
    await ensure_topics(kafka)
    sealer = await open_sealer(KeysSettings(kek=SecretStr(KEK), encrypt_log=True), pool)
    env = _encrypted_env(isolated)
    with running_worker(isolated, log_path=tmp_path / "worker.log", env=env):
        yield SealedMemory(isolated, kafka, pool, sealer)


def _words_in(blobs: dict[str, list[bytes]]) -> dict[str, list[str]]:
    return {
        topic: found
        for topic, records in blobs.items()
        if (found := [w for w in SECRETS if any(w.encode() in r.lower() for r in records)])
    }


async def _replay(memory: SealedMemory, tmp_path: Path) -> None:
    """Empty every projection and form the whole log again from offset 0 in a new group."""
    async with memory.pool.acquire() as conn:
        await drop_projections(conn, backlog=True)
    replay = {
        "group_id": f"{memory.kafka.group_id}-replay",
        "claims_topic": f"{memory.kafka.claims_topic}.replay",
    }
    await ensure_topics(memory.isolated.kafka(partitions=1, **replay))
    env = _encrypted_env(memory.isolated, **replay)
    with running_worker(memory.isolated, log_path=tmp_path / "replay.log", env=env):
        await wait_for_watermarks(memory.pool, memory.positions, timeout_s=WAIT_S)
        await indexed_to_the_end(memory.kafka, memory.pool, timeout_s=WAIT_S)
        await embedded_to_the_end(memory.kafka, memory.pool, timeout_s=WAIT_S)


async def test_after_forgetting_no_topic_no_table_and_no_replay_holds_their_words(
    memory: SealedMemory, isolated: Isolated, pool: asyncpg.Pool, tmp_path: Path
) -> None:
    t = isolated.tenant
    await memory.say(
        turn(t, "ana", "p", "I live in Zanzibar. I prefer marmalade.", seq=0),
        turn(t, "ana", "p", "My cat is named Quixotically.", seq=1, session="s2"),
        turn(t, "bo", "p", "I live in Cork. I prefer tea.", seq=2),
    )
    # Formed from sealed words: the worker opened them.
    assert "Zanzibar" in await memory.objects("ana")
    [zanzibar] = [
        b for b in await list_beliefs(pool, tenant=t, principal="ana") if b.object == "Zanzibar"
    ]
    await memory.formed(
        [
            await memory.service.correct(
                tenant=t,
                principal="ana",
                belief_id=zanzibar.belief_id,
                kind=CorrectionKind.CHANGED,
                replacement="Hepplewhite",
            )
        ]
    )
    assert "Hepplewhite" in await memory.objects("ana")
    # Sealed at rest already: the topics never held the words in clear.
    assert _words_in(await every_record(isolated.bootstrap, isolated.prefix)) == {}
    bo_before = await memory.objects("bo")
    # Vectors are derived from the words: the worker's embedding follower made ana's.
    await embedded_to_the_end(memory.kafka, pool, timeout_s=WAIT_S)
    ana_vectors = await vectors_of(pool, t, "ana")
    assert len(ana_vectors) == 2
    assert vectors_in_dump(ana_vectors, pg_dump_text(isolated.database_url)) == ana_vectors

    forgetting = await memory.service.forget(tenant=t, principal="ana")
    await memory.formed([forgetting])

    # The receipt says what went, and that the log's copy is sealed under a destroyed key.
    receipt = await Erasures(pool, memory.kafka).receipt(
        event_id=forgetting.event_id, tenant=t, principal="ana"
    )
    assert receipt is not None and not receipt.already
    assert receipt.data_key.destroyed and receipt.log.state == "sealed", receipt.log
    assert receipt.log.episodes_sealed >= 3 and receipt.log.episodes_in_clear == 0
    assert "unreadable from now on" in receipt.log.says
    erased = {rows.table: rows.rows for rows in receipt.erased}
    assert erased["belief"] >= 1 and erased["embedding_vector"] >= 2 and erased["message"] >= 2
    assert not any(w in receipt.model_dump_json().lower() for w in SECRETS)

    assert await pool.fetchval("SELECT count(*) FROM data_key WHERE principal = 'ana'") == 0
    # the destroyed key is recorded by its id and pseudonym only: no name, no hash of one
    destroyed = await pool.fetch("SELECT * FROM destroyed_data_key WHERE tenant = $1", t)
    assert len(destroyed) == 1 and set(destroyed[0].keys()) == {
        "tenant",
        "key_id",
        "pseudonym",
        "destroyed_at",
    }
    assert _words_in(await every_record(isolated.bootstrap, isolated.prefix)) == {}
    # ... nor the broker's files of any of this test's topics (when the broker is local).
    dirs = await local_log_dirs(isolated.bootstrap)
    assert files_holding(topic_files(dirs, isolated.prefix), SECRETS) == {}
    dump = pg_dump_text(isolated.database_url)
    assert [w for w in SECRETS if w in dump] == []
    assert await vectors_of(pool, t, "ana") == []
    assert vectors_in_dump(ana_vectors, dump) == []
    digest = await projection_digest(pool)

    await _replay(memory, tmp_path)
    assert await memory.objects("ana") == []
    assert await memory.objects("bo") == bo_before
    assert await projection_digest(pool) == digest
    dump = pg_dump_text(isolated.database_url)
    assert [w for w in SECRETS if w in dump] == []
    assert await vectors_of(pool, t, "ana") == [], "a replay embeds nothing of theirs"
    assert vectors_in_dump(ana_vectors, dump) == []


async def test_a_worker_with_the_wrong_key_encryption_key_stops_at_start(
    memory: SealedMemory, isolated: Isolated
) -> None:
    await memory.say(turn(isolated.tenant, "ana", "p", "I live in Zanzibar.", seq=0))
    wrong = _encrypted_env(isolated, kek=new_kek_text())
    finished = subprocess.run(
        [sys.executable, "-m", "engram", "worker"],
        cwd=REPO,
        env=wrong,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert finished.returncode != 0
    said = finished.stderr + finished.stdout
    assert "not started" in said and "not configured" in said, said
    assert KEK not in said


async def test_with_encryption_on_a_record_nobody_sealed_is_dead_lettered_without_its_bytes(
    memory: SealedMemory, isolated: Isolated
) -> None:
    junk = b'{"type": "turn.appended", "note": "my pin is 4821 and I love zanzibar"}'
    async with EpisodeProducer(memory.kafka) as producer:
        await producer.publish_raw(b"k", junk)

    async def dead_letters() -> list[bytes]:
        return (await every_record(isolated.bootstrap, memory.kafka.dlq_topic))[
            memory.kafka.dlq_topic
        ]

    await wait_until(
        lambda: _has_any(dead_letters()), timeout_s=WAIT_S, what="the junk record dead-lettered"
    )
    [letter] = await dead_letters()
    assert b"zanzibar" not in letter and b"4821" not in letter
    assert hashlib.sha256(junk).hexdigest().encode() in letter


async def _has_any(records: Awaitable[list[bytes]]) -> bool:
    return bool(await records)


async def test_rotating_the_kek_under_load_with_a_kill_9_loses_nothing(
    isolated: Isolated, pool: asyncpg.Pool, tmp_path: Path
) -> None:
    """Every process holds the new KEK and the old one while `engram keys rotate` runs and
    turns keep arriving; the rotation is killed with SIGKILL half-way and run again; then a
    replay with only the new KEK reproduces the projection."""
    t = isolated.tenant
    kafka = isolated.kafka(partitions=1)
    await ensure_topics(kafka)
    old, new = KEK, new_kek_text()
    before = [turn(t, f"p{n:02}", "p", f"I live in Zanzibar {n}.", seq=n) for n in range(12)]
    sealer_old = await open_sealer(KeysSettings(kek=SecretStr(old), encrypt_log=True), pool)
    memory = SealedMemory(isolated, kafka, pool, sealer_old)
    with running_worker(isolated, log_path=tmp_path / "old.log", env=_encrypted_env(isolated)):
        await memory.say(*before)

    both = _encrypted_env(isolated, kek=new) | {"ENGRAM_KEYS_PREVIOUS_KEK": old}
    sealer_both = await open_sealer(
        KeysSettings(kek=SecretStr(new), previous_kek=SecretStr(old), encrypt_log=True), pool
    )
    memory.sealer = sealer_both
    rotate_env = both | {"ENGRAM_KEYS_ROTATE_BATCH": "1"}
    with running_worker(isolated, log_path=tmp_path / "both.log", env=both):
        child = subprocess.Popen(
            [sys.executable, "-m", "engram", "keys", "rotate"],
            cwd=REPO,
            env=rotate_env,
            stderr=subprocess.PIPE,
            text=True,
        )
        assert child.stderr is not None
        during = [turn(t, f"q{n:02}", "p", f"I live in Cork {n}.", seq=20 + n) for n in range(4)]
        for line in child.stderr:  # wait on its progress, not on a clock
            if line.startswith("re-wrapped 3 data keys"):
                child.send_signal(signal.SIGKILL)
                break
        child.wait(timeout=60)
        assert child.returncode == -signal.SIGKILL
        await memory.say(*during, turn(t, "p00", "p", "I prefer marmalade.", seq=40))
        for _ in range(3):  # a key made under the old KEK meanwhile asks for one more run
            rerun = subprocess.run(
                [sys.executable, "-m", "engram", "keys", "rotate"],
                cwd=REPO,
                env=rotate_env,
                capture_output=True,
                text=True,
                timeout=120,
            )
            if rerun.returncode == 0:
                break
        assert rerun.returncode == 0, rerun.stderr
        assert old not in rerun.stderr + rerun.stdout
    digest = await projection_digest(pool)
    assert len(await memory.objects("p00")) == 2

    only_new = {
        "group_id": f"{kafka.group_id}-replay",
        "claims_topic": f"{kafka.claims_topic}.replay",
    }
    async with pool.acquire() as conn:
        await drop_projections(conn, backlog=True)
    await ensure_topics(isolated.kafka(partitions=1, **only_new))
    env = _encrypted_env(isolated, kek=new, **only_new)
    with running_worker(isolated, log_path=tmp_path / "new.log", env=env):
        await wait_for_watermarks(pool, memory.positions, timeout_s=WAIT_S)
        await indexed_to_the_end(kafka, pool, timeout_s=WAIT_S)
    assert await projection_digest(pool) == digest


async def test_a_receipt_names_a_producer_writing_in_clear_around_the_doors_as_the_cause(
    memory: SealedMemory, isolated: Isolated, pool: asyncpg.Pool
) -> None:
    """With encryption on, a turn written straight to the log in clear (a producer that is not
    Engram's doors) lies after sealed episodes of its partition: the receipt says that, not that
    it was appended while the log was not encrypted."""
    t = isolated.tenant
    await memory.say(turn(t, "ana", "p", "I live in Zanzibar.", seq=0))
    async with EpisodeProducer(memory.kafka) as around_the_doors:  # no sealer: in clear
        await memory.formed(
            await around_the_doors.publish_many([turn(t, "ana", "p", "I like tea.", seq=1)])
        )
    forgetting = await memory.service.forget(tenant=t, principal="ana")
    await memory.formed([forgetting])
    receipt = await Erasures(pool, memory.kafka).receipt(
        event_id=forgetting.event_id, tenant=t, principal="ana"
    )
    assert receipt is not None and receipt.log.state == "partly_in_clear", receipt
    assert receipt.log.episodes_in_clear == 1 and receipt.log.episodes_sealed >= 1
    said = receipt.log.says
    assert "written straight to the topic by a producer other than Engram's doors" in said, said
    assert "while the log was not encrypted" not in said, said
