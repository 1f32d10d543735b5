"""``engram log encrypt`` on real Kafka and PostgreSQL: a plaintext log copied into a sealed
one position for position, resumably; re-deriving from the copy gives the projection the
plaintext log gave, digest for digest; no word of it is readable in the copy without keys, and
a person forgotten before encryption stays forgotten."""

from __future__ import annotations

from functools import partial
from pathlib import Path

import asyncpg
import pytest
from aiokafka import AIOKafkaConsumer, TopicPartition
from pydantic import SecretStr

from engram.infra.settings import KeysSettings
from engram.ingest.log_encryption import (
    CopyProgress,
    LogEncryption,
    forgotten_principals,
    record_pre_encryption_forgetting,
)
from engram.ingest.producer import EpisodeProducer
from engram.ingest.topics import ensure_topics
from engram.keys.kek import new_kek_text
from engram.projections.beliefs.digest import PROJECTED_TABLES, drop_projections, projection_digest
from engram.projections.reads.queries import list_beliefs
from engram.sealing.events import LogSealer
from engram.sealing.opening import open_sealer
from engram.service.corrections import Corrections
from engram.watermarks.waiting import wait_for_watermarks
from tests.support.episodes import turn
from tests.support.indexing import indexed_to_the_end
from tests.support.isolation import Isolated, running_worker

pytestmark = pytest.mark.integration

WAIT_S = 90
KEK = new_kek_text()
WORDS = ("zanzibar", "marmalade", "quixotically", "hepplewhite", "kilimanjaro")


class _Stop(Exception):
    """The operator's Ctrl-C, after the first acknowledged fetch."""


async def _raw(bootstrap: str, topic: str) -> list[tuple[int, bytes]]:
    consumer = AIOKafkaConsumer(bootstrap_servers=bootstrap, enable_auto_commit=False)
    await consumer.start()
    try:
        tp = TopicPartition(topic, 0)
        consumer.assign([tp])
        await consumer.seek_to_beginning(tp)
        end = (await consumer.end_offsets([tp]))[tp]
        records: list[tuple[int, bytes]] = []
        while await consumer.position(tp) < end:
            for batch in (await consumer.getmany(timeout_ms=500)).values():
                records.extend((r.offset, r.value or b"") for r in batch)
        return records
    finally:
        await consumer.stop()


async def _projected_rows(pool: asyncpg.Pool) -> dict[str, list[str]]:
    """Every projected row as JSON, by table: what :func:`projection_digest` hashes."""
    await projection_digest(pool)  # its link check: no row cites one that is not there
    return {
        table: sorted(
            row["row"]
            for row in await pool.fetch(f"SELECT row_to_json(t)::text AS row FROM {table} t")
        )
        for table, _ in PROJECTED_TABLES
    }


async def test_an_encrypted_copy_rederives_to_the_plaintext_logs_projection(
    isolated: Isolated, pool: asyncpg.Pool, tmp_path: Path
) -> None:
    t = isolated.tenant
    kafka = isolated.kafka(partitions=1)
    await ensure_topics(kafka)
    turns = [
        turn(t, "ana", "p", "I live in Zanzibar. I prefer marmalade.", seq=0),
        turn(t, "carol", "p", "My cat is named Quixotically.", seq=1),
        turn(t, "bo", "p", "I live in Kilimanjaro. I use Vim.", seq=2),
        turn(t, "ana", "p", "I work at Hepplewhite.", seq=3, session="s2"),
    ]
    async with EpisodeProducer(kafka) as producer:
        positions = await producer.publish_many(turns)
        await producer.publish_raw(b"k", b'{"not": "an episode, says zanzibar"}')
    # A deployment from before encryption: its worker has no key-encryption key yet.
    plain_env = {
        k: v for k, v in isolated.env(partitions=1).items() if not k.startswith("ENGRAM_KEYS_")
    } | {"ENGRAM_KEYS_ENCRYPT_LOG": "false"}
    with running_worker(isolated, log_path=tmp_path / "plain.log", env=plain_env):
        positions.append(await Corrections(pool, kafka).forget(tenant=t, principal="carol"))
        await wait_for_watermarks(pool, positions, timeout_s=WAIT_S)
        await indexed_to_the_end(kafka, pool, timeout_s=WAIT_S)
    plain = await _projected_rows(pool)
    assert "Zanzibar" in {b.object for b in await list_beliefs(pool, tenant=t, principal="ana")}

    target = f"{isolated.prefix}.episodes.sealed"
    sealer = await open_sealer(KeysSettings(kek=SecretStr(KEK), encrypt_log=True), pool)
    assert isinstance(sealer, LogSealer)

    def copier() -> LogEncryption:
        return LogEncryption(
            kafka,
            source=kafka.episodes_topic,
            target=target,
            sealer=sealer,
            forgotten=forgotten,
            on_forgotten_before_encryption=partial(record_pre_encryption_forgetting, pool),
            fetch_records=2,
        )

    stopped: list[CopyProgress] = []

    def stop_once(progress: CopyProgress) -> None:
        stopped.append(progress)
        raise _Stop

    forgotten = await forgotten_principals(pool)
    with pytest.raises(_Stop):
        await copier().run(on_progress=stop_once)
    first = len(await _raw(kafka.bootstrap, target))
    assert 0 < first < len(turns) + 2
    done = await copier().run()  # resumes at the copy's end offset
    assert (done.copied, done.total) == (len(turns) + 2, len(turns) + 2)
    assert done.forgotten + stopped[0].forgotten == 1  # each run counts what it copied
    assert done.invalid + stopped[0].invalid == 1

    source = await _raw(kafka.bootstrap, kafka.episodes_topic)
    copied = await _raw(kafka.bootstrap, target)
    assert [offset for offset, _ in copied] == [offset for offset, _ in source]
    assert [w for w in WORDS if any(w.encode() in value.lower() for _, value in copied)] == []

    async with pool.acquire() as conn:
        await drop_projections(conn, backlog=True)
    sealed_kafka = {
        "episodes_topic": target,
        "group_id": f"{kafka.group_id}-sealed",
        "claims_topic": f"{kafka.claims_topic}.sealed",
    }
    await ensure_topics(isolated.kafka(partitions=1, **sealed_kafka))
    env = isolated.env(partitions=1, **sealed_kafka) | {"ENGRAM_KEYS_KEK": KEK}
    with running_worker(isolated, log_path=tmp_path / "sealed.log", env=env):
        await wait_for_watermarks(pool, positions, timeout_s=WAIT_S)
        await indexed_to_the_end(
            isolated.kafka(partitions=1, **sealed_kafka), pool, timeout_s=WAIT_S
        )
    # The same rows, except that evidence and runs now cite the topic they were read from.
    cited = (f'"source_topic":"{target}"', f'"source_topic":"{kafka.episodes_topic}"')
    sealed = await _projected_rows(pool)
    assert {
        table: sorted(row.replace(*cited) for row in rows) for table, rows in sealed.items()
    } == plain
    assert await list_beliefs(pool, tenant=t, principal="carol") == []
