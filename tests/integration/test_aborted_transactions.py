"""Formation reads committed records only, on real Kafka and PostgreSQL: a turn a transactional
producer appended in a transaction it then aborted (and never sent again) forms nothing — no
belief, no refusal, no run, no indexed message — while a turn committed after it forms, and the
formed watermark, formation's committed offset and the message index all move past the offsets
the aborted records and the transaction markers took."""

from __future__ import annotations

import uuid
from pathlib import Path

import asyncpg
import pytest
from aiokafka import AIOKafkaProducer

from engram.generations.runtime import committed_offsets, end_offsets, generation_lag
from engram.ingest.producer import encode_episode
from engram.ingest.topics import ensure_topics
from engram.projections.messages.indexer import indexed_offsets
from engram.projections.reads.queries import list_beliefs
from engram.schemas.api import LogPosition
from engram.schemas.common import episode_key
from engram.schemas.episodes import TurnAppended
from engram.watermarks.backlog import watermark
from engram.watermarks.waiting import wait_for_watermarks
from tests.support.conditions import wait_until
from tests.support.episodes import turn
from tests.support.isolation import Isolated, running_worker

pytestmark = pytest.mark.integration

WAIT_S = 90


async def _in_transactions(
    isolated: Isolated, topic: str, turns: list[tuple[TurnAppended, bool]]
) -> list[int]:
    """Append each turn in a transaction of its own, committed or (False) aborted and never
    sent again, by one transactional producer; their offsets, in order."""
    producer = AIOKafkaProducer(
        bootstrap_servers=isolated.bootstrap, transactional_id=f"{isolated.prefix}-{uuid.uuid4()}"
    )
    await producer.start()
    offsets: list[int] = []
    try:
        for episode, commit in turns:
            await producer.begin_transaction()
            sent = await producer.send_and_wait(
                topic, encode_episode(episode), key=episode_key(episode.tenant, episode.project)
            )
            offsets.append(int(sent.offset))
            await (producer.commit_transaction() if commit else producer.abort_transaction())
    finally:
        await producer.stop()
    return offsets


async def test_an_aborted_turn_forms_nothing_and_the_log_moves_past_it(
    isolated: Isolated, pool: asyncpg.Pool, tmp_path: Path
) -> None:
    t = isolated.tenant
    kafka = isolated.kafka(partitions=1)
    await ensure_topics(kafka)
    aborted = turn(t, "ana", "p", "I live in Zanzibar. I prefer marmalade.", seq=0)
    committed = turn(t, "bo", "p", "I live in Kilimanjaro. I use Vim.", seq=1)
    aborted_at, committed_at = await _in_transactions(
        isolated, kafka.episodes_topic, [(aborted, False), (committed, True)]
    )
    # The aborted record and its abort marker take offsets before the committed turn.
    assert committed_at >= aborted_at + 2
    position = LogPosition(
        event_id=committed.event_id, tenant=t, project="p", partition=0, offset=committed_at
    )
    # A worker on a plaintext log, as test_log_encrypt's first one: the turns are in clear.
    env = {k: v for k, v in isolated.env(partitions=1).items() if not k.startswith("ENGRAM_KEYS_")}
    env |= {"ENGRAM_KEYS_ENCRYPT_LOG": "false"}
    with running_worker(isolated, log_path=tmp_path / "worker.log", env=env):
        await wait_for_watermarks(pool, [position], timeout_s=WAIT_S)

        async def formation_committed_past() -> bool:
            formed = await committed_offsets(kafka, kafka.group_id, kafka.episodes_topic)
            return formed.get(0, 0) > committed_at

        await wait_until(
            formation_committed_past, timeout_s=WAIT_S, what="formation commits past the turn"
        )

        async def indexed_past() -> bool:
            return (await indexed_offsets(pool, kafka.episodes_topic)).get(0, 0) > committed_at

        await wait_until(indexed_past, timeout_s=WAIT_S, what="the index reads past the turn")

    assert {b.object for b in await list_beliefs(pool, tenant=t, principal="bo")} >= {"Kilimanjaro"}
    assert await list_beliefs(pool, tenant=t, principal="ana", include_all=True) == []
    episodes = [aborted.event_id, committed.event_id]
    runs = await pool.fetch(
        "SELECT episode_id, source_offset FROM consolidation_run WHERE episode_id = ANY($1)",
        episodes,
    )
    assert [(r["episode_id"], r["source_offset"]) for r in runs] == [
        (committed.event_id, committed_at)
    ]
    refused = await pool.fetchval(
        "SELECT count(*) FROM refusal WHERE episode_id = $1", aborted.event_id
    )
    assert refused == 0
    backlog = await pool.fetch(
        'SELECT "offset", state FROM formation_backlog WHERE tenant = $1 ORDER BY "offset"', t
    )
    assert [(r["offset"], r["state"]) for r in backlog] == [(committed_at, "formed")]
    indexed = await pool.fetch(
        "SELECT DISTINCT principal, episode_id FROM message WHERE tenant = $1", t
    )
    assert [(r["principal"], r["episode_id"]) for r in indexed] == [("bo", committed.event_id)]
    mark = await watermark(pool, tenant=t, project="p")
    assert mark.formed_offset == committed_at and mark.formed_through(aborted_at)


async def test_a_log_ending_in_an_aborted_transaction_is_caught_up_once_formed(
    isolated: Isolated, pool: asyncpg.Pool, tmp_path: Path
) -> None:
    """The last offsets of the log are a commit marker, an aborted turn and its abort marker:
    no record formation is handed, so its committed offset stays short of the end; the
    generation's lag still reaches zero (what `engram rederive --until-caught-up` waits on)."""
    t = isolated.tenant
    kafka = isolated.kafka(partitions=1)
    await ensure_topics(kafka)
    committed = turn(t, "bo", "p", "I live in Kilimanjaro.", seq=0)
    aborted = turn(t, "ana", "p", "I live in Zanzibar.", seq=1)
    committed_at, aborted_at = await _in_transactions(
        isolated, kafka.episodes_topic, [(committed, True), (aborted, False)]
    )
    ends = await end_offsets(kafka, kafka.episodes_topic)
    assert ends[0] == aborted_at + 2 and aborted_at >= committed_at + 2
    position = LogPosition(
        event_id=committed.event_id, tenant=t, project="p", partition=0, offset=committed_at
    )
    env = {k: v for k, v in isolated.env(partitions=1).items() if not k.startswith("ENGRAM_KEYS_")}
    env |= {"ENGRAM_KEYS_ENCRYPT_LOG": "false"}
    with running_worker(isolated, log_path=tmp_path / "worker.log", env=env):
        await wait_for_watermarks(pool, [position], timeout_s=WAIT_S)

        async def caught_up() -> bool:
            return (await generation_lag(kafka, pool, "public")).caught_up

        await wait_until(caught_up, timeout_s=WAIT_S, what="the generation reaches the head")
    formed = await committed_offsets(kafka, kafka.group_id, kafka.episodes_topic)
    assert committed_at < formed[0] < ends[0]  # the gap is skipped, not committed past
    assert await list_beliefs(pool, tenant=t, principal="ana", include_all=True) == []
    assert {b.object for b in await list_beliefs(pool, tenant=t, principal="bo")} >= {"Kilimanjaro"}
