"""``engram log encrypt`` on real Kafka and PostgreSQL: a plaintext log that a transactional
producer wrote to (commit markers and an aborted transaction leave gaps in its offsets) copied
into a sealed one in order, each record naming its source offset, resumably after a stop;
re-deriving from the copy gives the projection the plaintext log gave, row for row with each
position mapped; no word of it is readable in the copy without keys, a person forgotten before
encryption stays forgotten, and a copy that has not finished is refused by every reader."""

from __future__ import annotations

import json
import subprocess
import sys
import uuid
from collections.abc import Sequence
from functools import partial
from pathlib import Path

import asyncpg
import pytest
from aiokafka import AIOKafkaConsumer, AIOKafkaProducer, TopicPartition
from pydantic import SecretStr

from engram.infra.settings import KeysSettings
from engram.ingest.log_copies import begin_copy, copy_of, finish_copy, unfinished_copy
from engram.ingest.log_encryption import (
    COPIED_FROM,
    CopyProgress,
    LogEncryption,
    NotACopy,
    forgotten_principals,
    record_pre_encryption_forgetting,
)
from engram.ingest.producer import EpisodeProducer, encode_episode
from engram.ingest.topics import ensure_topics
from engram.keys.kek import new_kek_text
from engram.projections.beliefs.digest import PROJECTED_TABLES, drop_projections, projection_digest
from engram.projections.reads.queries import list_beliefs
from engram.schemas.api import LogPosition
from engram.schemas.common import episode_key
from engram.schemas.episodes import TurnAppended
from engram.schemas.log import decode_log_event
from engram.schemas.sealed import SealedEvent
from engram.sealing.events import LogSealer
from engram.sealing.opening import open_sealer
from engram.service.corrections import Corrections
from engram.watermarks.waiting import wait_for_watermarks
from tests.support.episodes import turn
from tests.support.indexing import indexed_to_the_end
from tests.support.isolation import REPO, Isolated, running_worker

pytestmark = pytest.mark.integration

WAIT_S = 90
KEK = new_kek_text()
WORDS = ("zanzibar", "marmalade", "quixotically", "hepplewhite", "kilimanjaro")


class _Stop(Exception):
    """The operator's Ctrl-C, after the first acknowledged fetch."""


async def _raw(bootstrap: str, topic: str) -> list[tuple[int, bytes, dict[str, bytes]]]:
    """Every committed record of partition 0: offset, value and headers."""
    consumer = AIOKafkaConsumer(
        bootstrap_servers=bootstrap, enable_auto_commit=False, isolation_level="read_committed"
    )
    await consumer.start()
    try:
        tp = TopicPartition(topic, 0)
        consumer.assign([tp])
        await consumer.seek_to_beginning(tp)
        end = (await consumer.end_offsets([tp]))[tp]
        records: list[tuple[int, bytes, dict[str, bytes]]] = []
        while await consumer.position(tp) < end:
            for batch in (await consumer.getmany(timeout_ms=500)).values():
                records.extend((r.offset, r.value or b"", dict(r.headers or ())) for r in batch)
        return records
    finally:
        await consumer.stop()


async def _append_in_transactions(
    bootstrap: str, topic: str, groups: Sequence[tuple[bool, Sequence[TurnAppended]]]
) -> list[LogPosition]:
    """Each group in a transaction of its own, committed or (``False``) aborted, as the inbox
    intake appends: commit markers and aborted records take offsets. The committed positions."""
    producer = AIOKafkaProducer(
        bootstrap_servers=bootstrap, transactional_id=f"{topic}-test-{uuid.uuid4()}"
    )
    await producer.start()
    positions: list[LogPosition] = []
    try:
        for commit, episodes in groups:
            await producer.begin_transaction()
            sent = [
                (
                    e,
                    await producer.send(
                        topic, encode_episode(e), key=episode_key(e.tenant, e.project)
                    ),
                )
                for e in episodes
            ]
            landed = [(e, await future) for e, future in sent]
            if commit:
                await producer.commit_transaction()
                positions += [
                    LogPosition(
                        event_id=e.event_id,
                        tenant=e.tenant,
                        project=e.project,
                        partition=m.partition,
                        offset=m.offset,
                    )
                    for e, m in landed
                ]
            else:
                await producer.abort_transaction()
    finally:
        await producer.stop()
    return positions


def _mapping(copied: list[tuple[int, bytes, dict[str, bytes]]]) -> dict[int, int]:
    """Source offset → the copy's offset, from each copied record's header."""
    return {int(headers[COPIED_FROM]): offset for offset, _, headers in copied}


def _mapped_row(row: str, mapping: dict[int, int], cited: tuple[str, str]) -> str:
    """A projected row of the copy's generation as the source's would be: its topic and its
    position the source's."""
    value = json.loads(row)
    if "source_offset" in value and value.get("source_topic") == cited[0]:
        back = {copy: source for source, copy in mapping.items()}
        value["source_offset"] = back[value["source_offset"]]
        value["source_topic"] = cited[1]
    return json.dumps(value, sort_keys=True)


async def _projected_rows(pool: asyncpg.Pool) -> dict[str, list[str]]:
    """Every projected row as JSON, by table: what :func:`projection_digest` hashes."""
    await projection_digest(pool)  # its link check: no row cites one that is not there
    return {
        table: [
            row["row"]
            for row in await pool.fetch(f"SELECT row_to_json(t)::text AS row FROM {table} t")
        ]
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
    # As the inbox intake does after a failure: a transaction aborted, its turn sent again.
    positions = await _append_in_transactions(
        kafka.bootstrap,
        kafka.episodes_topic,
        [(True, turns[:2]), (False, turns[2:3]), (True, turns[2:])],
    )
    async with EpisodeProducer(kafka) as producer:
        await producer.publish_raw(b"k", b'{"not": "an episode, says zanzibar"}')
    offsets = [offset for offset, _, _ in await _raw(kafka.bootstrap, kafka.episodes_topic)]
    assert offsets != list(range(len(offsets)))  # markers and the aborted turn left gaps
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
    await ensure_topics(isolated.kafka(partitions=1, episodes_topic=target))
    await begin_copy(pool, source=kafka.episodes_topic, target=target)
    with pytest.raises(_Stop):
        await copier().run(on_progress=stop_once)
    records = len(await _raw(kafka.bootstrap, kafka.episodes_topic))  # with the forgetting
    first = len(await _raw(kafka.bootstrap, target))
    assert 0 < first < records
    assert await unfinished_copy(pool, target) is not None  # a stopped copy is no whole log
    done = await copier().run()  # resumes after the last record the copy names
    await finish_copy(pool, target=target, records=done.copied)
    assert done.copied == records and done.passed == done.total > records
    assert done.forgotten + stopped[0].forgotten == 1  # each run counts what it copied
    assert done.invalid + stopped[0].invalid == 1

    source = await _raw(kafka.bootstrap, kafka.episodes_topic)
    copied = await _raw(kafka.bootstrap, target)
    assert [offset for offset, _, _ in copied] == list(range(records))  # dense
    mapping = _mapping(copied)
    assert list(mapping) == [offset for offset, _, _ in source]  # each once, in order
    assert [w for w in WORDS if any(w.encode() in value.lower() for _, value, _ in copied)] == []
    # ... nor who said them: every record of the copy names its principal by pseudonym, a
    # living one's the one beside their key, carol's (forgotten) a random one kept nowhere
    named = [
        who
        for who in ("ana", "bo", "carol")
        if any(f'"principal":"{who}"'.encode() in value for _, value, _ in copied)
    ]
    assert named == []
    assert await copier().run() == CopyProgress(
        total=done.total, copied=records, passed=done.total
    )  # a finished copy run again appends nothing

    async with pool.acquire() as conn:
        await drop_projections(conn, backlog=True)
    sealed_kafka = {
        "episodes_topic": target,
        "group_id": f"{kafka.group_id}-sealed",
        "claims_topic": f"{kafka.claims_topic}.sealed",
    }
    await ensure_topics(isolated.kafka(partitions=1, **sealed_kafka))
    env = isolated.env(partitions=1, **sealed_kafka) | {"ENGRAM_KEYS_KEK": KEK}
    # The positions a caller kept of the source, found in the copy by its header.
    in_copy = [p.model_copy(update={"offset": mapping[p.offset]}) for p in positions]
    with running_worker(isolated, log_path=tmp_path / "sealed.log", env=env):
        await wait_for_watermarks(pool, in_copy, timeout_s=WAIT_S)
        await indexed_to_the_end(
            isolated.kafka(partitions=1, **sealed_kafka), pool, timeout_s=WAIT_S
        )
    # The same rows, except that evidence and runs cite the copy, at the copy's positions.
    cited = (target, kafka.episodes_topic)
    sealed = await _projected_rows(pool)
    assert {
        table: sorted(_mapped_row(row, mapping, cited) for row in rows)
        for table, rows in sealed.items()
    } == {
        table: sorted(_mapped_row(row, {}, ("", "")) for row in rows)
        for table, rows in plain.items()
    }
    assert await list_beliefs(pool, tenant=t, principal="carol") == []


async def test_a_copy_that_has_not_finished_is_refused_and_the_command_finishes_it(
    isolated: Isolated, pool: asyncpg.Pool
) -> None:
    """`engram log encrypt` marks its copy unfinished before its first record; `engram log
    check` (and `engram worker`, `engram rederive`) refuse to read it until a run has copied
    the whole source; a target something else wrote to is refused, not appended to."""
    t = isolated.tenant
    kafka = isolated.kafka(partitions=1)
    await ensure_topics(kafka)
    said = [turn(t, "ana", "p", f"I use Tool{n}.", seq=n) for n in range(5)]
    await _append_in_transactions(
        kafka.bootstrap, kafka.episodes_topic, [(True, said[:3]), (True, said[3:])]
    )
    target = f"{isolated.prefix}.episodes.sealed"
    env = isolated.env(partitions=1) | {"COLUMNS": "300"}
    await begin_copy(pool, source=kafka.episodes_topic, target=target)  # as a stopped run left it
    checked = _engram(env | {"ENGRAM_KAFKA_EPISODES_TOPIC": target}, "log", "check")
    assert checked.returncode == 2, checked.stderr
    assert "has not finished" in checked.stderr and f"--to {target}" in checked.stderr
    worker = _engram(env | {"ENGRAM_KAFKA_EPISODES_TOPIC": target}, "worker")
    assert worker.returncode == 2 and "has not finished" in worker.stderr, worker.stderr

    done = _engram(env, "log", "encrypt", "--to", target)
    assert done.returncode == 0, done.stderr
    assert "finished" in done.stderr
    copy = await copy_of(pool, target)
    assert copy is not None and copy.finished_at is not None and copy.records == len(said)
    copied = await _raw(kafka.bootstrap, target)
    assert len(copied) == len(said)
    for (offset, value, headers), episode in zip(copied, said, strict=True):
        sealed = decode_log_event(value)
        assert isinstance(sealed, SealedEvent) and sealed.event_id == episode.event_id
        assert int(headers[COPIED_FROM]) >= offset
    assert _engram(env | {"ENGRAM_KAFKA_EPISODES_TOPIC": target}, "log", "check").returncode == 0

    foreign = f"{isolated.prefix}.episodes.foreign"
    await ensure_topics(isolated.kafka(partitions=1, episodes_topic=foreign))
    async with EpisodeProducer(isolated.kafka(partitions=1, episodes_topic=foreign)) as other:
        await other.publish_raw(b"k", b"{}")
    sealer = await open_sealer(isolated.keys(), pool)
    assert isinstance(sealer, LogSealer)
    with pytest.raises(NotACopy, match="names no source offset"):
        await LogEncryption(
            kafka,
            source=kafka.episodes_topic,
            target=foreign,
            sealer=sealer,
            forgotten=await forgotten_principals(pool),
            on_forgotten_before_encryption=partial(record_pre_encryption_forgetting, pool),
        ).run()


def _engram(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "engram", *args],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=WAIT_S,
        check=False,
    )
