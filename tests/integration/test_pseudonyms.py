"""Who a record is about (issue 43, item 5): with log encryption on, a principal's identifier
travels on the log only inside sealed words; what stays in clear names a random pseudonym kept
beside their data key. Once they are forgotten, the key and the pseudonym are gone, and no
record of any topic nor any file of the broker's holds their identifier — an e-mail address
here, as identifiers often are. Real Kafka, real PostgreSQL, a real worker process, and a plain
consumer with no Engram code reading the topics raw."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from datetime import UTC, datetime
from pathlib import Path

import asyncpg
import orjson
import pytest
from pydantic import SecretStr

from engram.infra.settings import KafkaSettings, KeysSettings
from engram.ingest.producer import EpisodeProducer
from engram.ingest.topics import ensure_topics
from engram.keys.kek import new_kek_text
from engram.projections.beliefs.digest import drop_projections
from engram.projections.reads.queries import list_beliefs
from engram.schemas.api import LogPosition
from engram.schemas.common import principal_hash
from engram.sealing.events import Sealer
from engram.sealing.opening import open_sealer
from engram.service.corrections import Corrections
from engram.service.erasures import Erasures
from engram.watermarks.waiting import wait_for_watermarks
from tests.support.broker_files import files_holding, local_log_dirs, topic_files
from tests.support.conditions import wait_until
from tests.support.episodes import turn
from tests.support.isolation import Isolated, running_worker
from tests.support.leftovers import every_record, pg_dump_text

pytestmark = pytest.mark.integration

WAIT_S = 90
KEK = new_kek_text()
EVE = "eve.quill-memory@example.org"
"""Forgotten: her identifier must be nowhere on the log afterwards."""
BO = "bo.stays@example.net"
"""Not forgotten: with encryption on, his identifier is not in clear on the log either."""


class Memory:
    def __init__(
        self, isolated: Isolated, kafka: KafkaSettings, pool: asyncpg.Pool, sealer: Sealer
    ):
        self.isolated, self.kafka, self.pool, self.sealer = isolated, kafka, pool, sealer
        self.service = Corrections(pool, kafka, sealer=sealer)

    async def formed(self, positions: list[LogPosition]) -> None:
        await wait_for_watermarks(self.pool, positions, timeout_s=WAIT_S)

    async def objects(self, principal: str) -> list[str]:
        beliefs = await list_beliefs(
            self.pool, tenant=self.isolated.tenant, principal=principal, include_all=True
        )
        return sorted(b.object for b in beliefs)

    async def published(self) -> None:
        """Every memory event queued so far is on the topic (the outbox has nothing pending)."""

        async def drained() -> bool:
            pending: int = await self.pool.fetchval("SELECT count(*) FROM memory_event_pending")
            return pending == 0

        await wait_until(drained, timeout_s=WAIT_S, what="memory events published")


@pytest.fixture
async def memory(isolated: Isolated, pool: asyncpg.Pool, tmp_path: Path) -> AsyncIterator[Memory]:
    kafka = isolated.kafka(partitions=2)
    await ensure_topics(kafka)
    sealer = await open_sealer(KeysSettings(kek=SecretStr(KEK), encrypt_log=True), pool)
    env = isolated.env(partitions=2) | {"ENGRAM_KEYS_KEK": KEK, "ENGRAM_KEYS_ENCRYPT_LOG": "true"}
    with running_worker(isolated, log_path=tmp_path / "worker.log", env=env):
        yield Memory(isolated, kafka, pool, sealer)


def _holding(records: dict[str, list[bytes]], needle: str) -> dict[str, int]:
    wanted = needle.lower().encode()
    return {
        topic: found
        for topic, blobs in records.items()
        if (found := sum(wanted in blob.lower() for blob in blobs))
    }


async def _beside(pool: asyncpg.Pool, digest: str) -> dict[str, str]:
    """Every value that could name a record, stored in a row of any table of any schema that
    also holds ``digest``: ids and times, in the forms the log writes them (a UUID's text, a
    time as JSON writes it), and other text long enough to be an id; each with where it is."""
    tables = await pool.fetch(
        "SELECT table_schema, table_name FROM information_schema.tables "
        "WHERE table_type = 'BASE TABLE' "
        "AND table_schema NOT IN ('pg_catalog', 'information_schema')"
    )
    found: dict[str, str] = {}
    for table in tables:
        rows = await pool.fetch(f'SELECT * FROM "{table[0]}"."{table[1]}"')
        for row in rows:
            if digest not in {str(value) for value in row.values()}:
                continue
            for column, value in row.items():
                where = f"{table[0]}.{table[1]}.{column}"
                if isinstance(value, uuid.UUID):
                    found[str(value)] = where
                elif isinstance(value, datetime):
                    found[value.astimezone(UTC).isoformat().replace("+00:00", "Z")] = where
                    found[value.astimezone(UTC).isoformat()] = where
                elif (
                    isinstance(value, str)
                    and value != digest
                    and len(value) >= 16
                    and any(c.isdigit() for c in value)
                ):
                    found[value] = where
    return found


async def _replay(memory: Memory, tmp_path: Path, positions: list[LogPosition]) -> None:
    """Empty every projection and form the whole log again from offset 0 in a new group."""
    async with memory.pool.acquire() as conn:
        await drop_projections(conn, backlog=True)
    replay = {
        "group_id": f"{memory.kafka.group_id}-replay",
        "claims_topic": f"{memory.kafka.claims_topic}.replay",
    }
    await ensure_topics(memory.isolated.kafka(partitions=2, **replay))
    env = memory.isolated.env(partitions=2, **replay) | {
        "ENGRAM_KEYS_KEK": KEK,
        "ENGRAM_KEYS_ENCRYPT_LOG": "true",
    }
    with running_worker(memory.isolated, log_path=tmp_path / "replay.log", env=env):
        await memory.formed(positions)


async def test_after_forgetting_no_topic_and_no_broker_file_holds_their_identifier(
    memory: Memory, isolated: Isolated, pool: asyncpg.Pool, tmp_path: Path
) -> None:
    t = isolated.tenant
    async with EpisodeProducer(memory.kafka, memory.sealer) as producer:
        positions = await producer.publish_many(
            [
                turn(t, EVE, "p", "I live in Lisbon. I prefer green tea.", seq=0),
                turn(t, EVE, "q", "My dog is named Biscuit.", seq=1, session="s2"),
                turn(t, BO, "p", "I live in Cork. I prefer coffee.", seq=2),
            ]
        )
        await memory.formed(positions)
    assert "Lisbon" in await memory.objects(EVE)  # formed: the worker mapped her pseudonym back
    [lisbon] = [
        b for b in await list_beliefs(pool, tenant=t, principal=EVE) if b.object == "Lisbon"
    ]
    deletion = await memory.service.delete(tenant=t, principal=EVE, belief_id=lisbon.belief_id)
    await memory.formed([deletion])
    assert "Lisbon" not in await memory.objects(EVE)
    await memory.published()

    # Before any forgetting: sealed, deleted, formed and published, and still no identifier in
    # clear — every record names a pseudonym, the one beside the principal's data key.
    before = await every_record(isolated.bootstrap, isolated.prefix)
    assert _holding(before, EVE) == {} and _holding(before, BO) == {}
    pseudonyms = dict(
        await pool.fetch("SELECT principal, pseudonym FROM data_key WHERE tenant = $1", t)
    )
    assert set(pseudonyms) == {EVE, BO}
    assert all(_holding(before, pseudonyms[who]) for who in (EVE, BO)), "the log names them so"

    forgetting = await memory.service.forget(tenant=t, principal=EVE)
    await memory.formed([forgetting])
    await memory.published()
    assert await memory.objects(EVE) == []
    assert "Cork" in await memory.objects(BO)

    # The forgetting itself names her pseudonym, which now maps to nobody.
    records = await every_record(isolated.bootstrap, isolated.prefix)
    forgotten = [
        event
        for blob in records[memory.kafka.episodes_topic]
        if b'"principal.forgotten"' in blob
        for event in [orjson.loads(blob.split(b"\x00")[1])]
    ]
    assert [event["principal"] for event in forgotten] == [pseudonyms[EVE]]
    assert await pool.fetchval("SELECT count(*) FROM data_key WHERE principal = $1", EVE) == 0
    assert (
        await pool.fetchval(
            "SELECT count(*) FROM data_key WHERE tenant = $1 AND pseudonym = $2", t, pseudonyms[EVE]
        )
        == 0
    )
    # the destroyed key's record keeps its id and pseudonym, and nothing that names her
    [destroyed] = await pool.fetch("SELECT * FROM destroyed_data_key WHERE tenant = $1", t)
    assert destroyed["pseudonym"] == pseudonyms[EVE]
    assert principal_hash(t, EVE) not in [str(value) for value in destroyed.values()]

    # No record of any topic (keys, values, headers) and no file of the broker holds her
    # identifier; in PostgreSQL only her tombstone's hash is left.
    assert _holding(records, EVE) == {}
    # The notice of her forgetting names her by the tombstone's hash, and no record of the log.
    notices = [
        blob
        for blob in records[memory.kafka.memory_events_topic]
        if b'"principal.forgotten"' in blob
    ]
    assert len(notices) == 1 and str(forgetting.event_id).encode() not in notices[0]
    dirs = await local_log_dirs(isolated.bootstrap)
    if dirs:  # a local broker: its segment files, indexes and snapshots of this test's topics
        files = topic_files(dirs, isolated.prefix)
        assert files
        assert files_holding(files, [EVE]) == {}
    assert EVE.lower() not in pg_dump_text(isolated.database_url).lower()

    # Whoever knows her name, holds the database and reads the log finds her hash in some rows;
    # nothing stored beside it names a record of the log that does not itself carry the hash
    # (her notice, which names no pseudonym): not her forgetting's id, nor its exact time.
    digest = principal_hash(t, EVE)
    beside = await _beside(pool, digest)
    assert beside, "her tombstone keeps her hash"
    elsewhere = [
        blob for blobs in records.values() for blob in blobs if digest.encode() not in blob
    ]
    linked = {
        where for value, where in beside.items() if any(value.encode() in b for b in elsewhere)
    }
    assert linked == set()
    hashed = [blob for blobs in records.values() for blob in blobs if digest.encode() in blob]
    assert hashed and all(pseudonyms[EVE].encode() not in blob for blob in hashed)
    assert str(forgetting.event_id) not in {event["event_id"] for event in forgotten}

    # The receipt names what the tombstone keeps, and that it names no record of the log.
    receipt = await Erasures(pool, memory.kafka).receipt(
        event_id=forgetting.event_id, tenant=t, principal=EVE
    )
    assert receipt is not None and receipt.data_key.destroyed and receipt.data_key.key_id is None
    [tombstone] = [line for line in receipt.kept if "principal tombstone" in line]
    assert "SHA-256 of tenant/principal" in tombstone and "pseudonym" in tombstone

    # A replay cannot tell whose the forgetting was any more, yet it keeps her forgotten: the
    # tombstone's hash is kept where a replay does not empty it, so words she says afterwards
    # (under a new key and a new pseudonym) form nothing, in the replayed projection too.
    await _replay(memory, tmp_path, [*positions, deletion, forgetting])
    assert await memory.objects(EVE) == [] and "Cork" in await memory.objects(BO)
    async with EpisodeProducer(memory.kafka, memory.sealer) as producer:
        again = await producer.publish_many(
            [turn(t, EVE, "p", "I live in Porto.", seq=3, session="s3")]
        )
    await memory.formed(again)
    assert await memory.objects(EVE) == []
