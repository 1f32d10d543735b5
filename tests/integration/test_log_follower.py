"""The log follower's contract, held by every sink behind it on real Kafka and PostgreSQL.

One suite (:class:`FollowerContract`), subclassed once per sink: the message index, the
vectors, the two behind one follower (as ``engram worker`` runs them), the belief projector's
lanes, and a sink written only here over another topic (what a new sink, a webhook notifier
over ``engram.memory-events`` say, starts from). Each holds the same four rules: a restart
resumes at the offsets stored with the projection, not the group's; a kill between a batch's
writes and its commit loses and doubles nothing; a rebalance between two followers of one
group, or two followers holding one partition at once, hand each record to the projection
once; and a database outage is waited out, the follower unready meanwhile. "Nothing lost or doubled" is read from the projection itself,
compared with the same records followed straight into a second database.
"""

from __future__ import annotations

import asyncio
import contextlib
import uuid
from abc import ABC, abstractmethod
from collections.abc import AsyncIterator, Sequence
from typing import Any, Protocol

import asyncpg
import orjson
import pytest
from aiokafka import AIOKafkaConsumer, AIOKafkaProducer, ConsumerRecord, TopicPartition

from engram.generations.runtime import end_offsets
from engram.infra.metrics import REGISTRY
from engram.infra.settings import KafkaSettings
from engram.ingest.producer import EpisodeProducer
from engram.ingest.topics import ensure_topics
from engram.projections.beliefs.digest import projection_digest
from engram.projections.beliefs.projector import BeliefProjector
from engram.projections.beliefs.store import BELIEFS_TRACKING
from engram.projections.following import Batch, BatchSink, LogFollower, Sink, Tracking
from engram.projections.messages.embedding_follower import MessageVectors
from engram.projections.messages.embeddings.generation import EmbeddingGeneration
from engram.projections.messages.embeddings.local import WordLlamaEmbedder
from engram.projections.messages.indexer import MessageIndex
from engram.projections.messages.reading import follow_messages
from engram.projections.messages.store import INDEX_TRACKING
from engram.projections.messages.vectors import vectors_tracking
from engram.schemas.episodes import TurnAppended
from tests.support.conditions import wait_until
from tests.support.databases import create_database, drop_database
from tests.support.episodes import turn
from tests.support.isolation import Isolated, new_prefix
from tests.support.projecting import city_batches, publish_batches
from tests.support.services import Services
from tests.support.tcp_proxy import TcpProxy

pytestmark = pytest.mark.integration

WAIT_S = 90
EMBEDDER = WordLlamaEmbedder(64)


class Followed(Protocol):
    """What the suite runs: a log follower, or a stage built on one (the belief projector)."""

    async def run(self) -> None: ...

    def stop(self) -> None: ...

    def readiness(self) -> tuple[bool, str]: ...


@pytest.fixture
async def reference(services: Services) -> AsyncIterator[asyncpg.Pool]:
    """A second migrated database: the same records followed straight, without a fault."""
    name = f"engram_{new_prefix()}"
    url = await create_database(services.database_url, name)
    created = await asyncpg.create_pool(url, min_size=1, max_size=4)
    try:
        yield created
    finally:
        await created.close()
        await drop_database(services.database_url, name)


class FollowerContract(ABC):
    """The rules every sink holds behind the follower; a subclass names the sink."""

    @abstractmethod
    def topic(self, kafka: KafkaSettings) -> str:
        """The topic the sink follows."""

    @abstractmethod
    async def publish(self, kafka: KafkaSettings, tenant: str, count: int, *, start: int) -> None:
        """Append ``count`` records for the sink (numbered from ``start``), over partitions."""

    @abstractmethod
    def follower(self, kafka: KafkaSettings, pool: asyncpg.Pool, *, batch: int) -> Followed:
        """The sink behind a follower; ``batch``: the most records a fetch brings."""

    @abstractmethod
    def trackings(self) -> Sequence[Tracking]:
        """Where the sinks store their offsets."""

    @abstractmethod
    async def snapshot(self, pool: asyncpg.Pool) -> object:
        """The projection's content, comparable between two databases."""

    @abstractmethod
    def fetched(self, followed: Followed) -> int:
        """Records the follower fetched and decoded."""

    @abstractmethod
    def outages(self, followed: Followed) -> int:
        """Failures its sinks waited out."""

    async def prepare(self, pool: asyncpg.Pool) -> None:
        """Anything the database needs before the sink writes (nothing by default)."""
        return None

    # --- the rules ---------------------------------------------------------------------

    async def test_a_restart_resumes_at_the_stored_offsets_not_the_groups(
        self, isolated: Isolated, pool: asyncpg.Pool
    ) -> None:
        kafka = await self._topics(isolated, partitions=2)
        await self.prepare(pool)
        await self.publish(kafka, isolated.tenant, 6, start=0)
        first = self.follower(kafka, pool, batch=500)
        async with running(first):
            await self._caught_up(kafka, pool)
        assert self.fetched(first) == 6

        # Kafka's committed offsets of the group sent back to 0: a lag gauge only.
        await _commit_at_zero(kafka, self.topic(kafka), _group_of(first))
        await self.publish(kafka, isolated.tenant, 4, start=6)
        again = self.follower(kafka, pool, batch=500)
        async with running(again):
            await self._caught_up(kafka, pool)
        assert self.fetched(again) == 4, "only what was not stored is fetched and decoded again"

    async def test_a_kill_between_the_writes_and_their_commit_loses_and_doubles_nothing(
        self,
        isolated: Isolated,
        pool: asyncpg.Pool,
        reference: asyncpg.Pool,
        monkeypatch: pytest.MonkeyPatch,
    ) -> None:
        kafka = await self._topics(isolated, partitions=1)
        await self.prepare(pool)
        await self.prepare(reference)
        await self.publish(kafka, isolated.tenant, 8, start=0)
        held = _hold_the_second_commit(monkeypatch, {t.projector for t in self.trackings()})
        killed = self.follower(kafka, pool, batch=2)
        task = asyncio.create_task(killed.run())
        try:
            await asyncio.wait_for(held.wait(), WAIT_S)
        finally:
            task.cancel()  # a kill: the transaction holding its writes never commits
            with contextlib.suppress(asyncio.CancelledError):
                await task
        monkeypatch.undo()
        stored = [await t.stored_offsets(pool, self.topic(kafka)) for t in self.trackings()]
        assert all(offsets.get(0, 0) < 8 for offsets in stored), "the kill came before the end"

        async with running(self.follower(kafka, pool, batch=2)):
            await self._caught_up(kafka, pool)
        assert await self.snapshot(pool) == await self._straight(kafka, reference)

    async def test_a_rebalance_between_two_followers_hands_each_record_on_once(
        self, isolated: Isolated, pool: asyncpg.Pool, reference: asyncpg.Pool
    ) -> None:
        kafka = await self._topics(isolated, partitions=2)
        await self.prepare(pool)
        await self.prepare(reference)
        await self.publish(kafka, isolated.tenant, 12, start=0)
        one = self.follower(kafka, pool, batch=2)
        async with running(one):
            await wait_until(
                lambda: self._stored_past(kafka, pool, 2),
                timeout_s=WAIT_S,
                what="the first follower has written",
            )
            two = self.follower(kafka, pool, batch=2)  # the same sinks: the same group
            async with running(two):
                await wait_until(
                    lambda: _split(_held(one), _held(two)),
                    timeout_s=WAIT_S,
                    what="the rebalance split the partitions between the two",
                )
                await self.publish(kafka, isolated.tenant, 12, start=12)
                await self._caught_up(kafka, pool)
        assert await self.snapshot(pool) == await self._straight(kafka, reference)

    async def test_two_followers_of_one_partition_at_once_write_each_record_once(
        self, isolated: Isolated, pool: asyncpg.Pool, reference: asyncpg.Pool
    ) -> None:
        """As after a rebalance whose old owner has not yet noticed: two groups, so both
        hold the partition and write every record into the same database."""
        kafka = await self._topics(isolated, partitions=1)
        await self.prepare(pool)
        await self.prepare(reference)
        rival = kafka.model_copy(update={"group_id": kafka.group_id + "-rival"})
        async with (
            running(self.follower(kafka, pool, batch=2)),
            running(self.follower(rival, pool, batch=2)),
        ):
            await self.publish(kafka, isolated.tenant, 16, start=0)
            await self._caught_up(kafka, pool)
        assert await self.snapshot(pool) == await self._straight(kafka, reference)

    async def test_a_database_outage_is_waited_out_and_loses_and_doubles_nothing(
        self, isolated: Isolated, pool: asyncpg.Pool, reference: asyncpg.Pool
    ) -> None:
        kafka = await self._topics(isolated, partitions=1)
        await self.prepare(pool)
        await self.prepare(reference)
        await self.publish(kafka, isolated.tenant, 6, start=0)
        proxy = await TcpProxy.in_front_of_url(isolated.database_url)
        through = await asyncpg.create_pool(
            proxy.url(isolated.database_url), min_size=1, max_size=4
        )
        followed = self.follower(kafka, through, batch=2)
        task = asyncio.create_task(followed.run())

        def alive_and(condition: bool) -> bool:
            if task.done():
                task.result()  # raises what ended it
                raise AssertionError("the follower stopped during the outage")
            return condition

        try:
            await self._caught_up(kafka, pool)
            proxy.cut()
            await self.publish(kafka, isolated.tenant, 6, start=6)
            await wait_until(
                lambda: alive_and(self.outages(followed) >= 2),
                timeout_s=WAIT_S,
                what="the sinks met the outage and waited it out",
            )
            await wait_until(
                lambda: alive_and(not followed.readiness()[0]),
                timeout_s=WAIT_S,
                what="unready while the database is away",
            )
            await proxy.restore()
            await wait_until(
                lambda: alive_and(followed.readiness() == (True, "ready")),
                timeout_s=WAIT_S,
                what="ready again once the database answers",
            )
            await self._caught_up(kafka, pool)
        finally:
            followed.stop()
            await task
            await through.close()
            await proxy.close()
        assert await self.snapshot(pool) == await self._straight(kafka, reference)

    # --- helpers -------------------------------------------------------------------------

    async def _topics(self, isolated: Isolated, *, partitions: int) -> KafkaSettings:
        kafka = isolated.kafka(partitions=partitions)
        await ensure_topics(kafka)
        return kafka

    async def _caught_up(self, kafka: KafkaSettings, pool: asyncpg.Pool) -> None:
        """Wait until every sink has stored the end of every partition (never on time)."""
        ends = await end_offsets(kafka, self.topic(kafka))

        async def stored_to_the_end() -> bool:
            for tracking in self.trackings():
                stored = await tracking.stored_offsets(pool, self.topic(kafka))
                if any(stored.get(p, 0) < end for p, end in ends.items() if end):
                    return False
            return True

        await wait_until(stored_to_the_end, timeout_s=WAIT_S, what="every sink stored the end")

    async def _stored_past(self, kafka: KafkaSettings, pool: asyncpg.Pool, count: int) -> bool:
        for tracking in self.trackings():
            stored = await tracking.stored_offsets(pool, self.topic(kafka))
            if sum(stored.values()) < count:
                return False
        return True

    async def _straight(self, kafka: KafkaSettings, reference: asyncpg.Pool) -> object:
        """The same records followed in one go into ``reference`` (a group of its own)."""
        alone = kafka.model_copy(update={"group_id": kafka.group_id + "-straight"})
        async with running(self.follower(alone, reference, batch=500)):
            await self._caught_up(alone, reference)
        return await self.snapshot(reference)


@contextlib.asynccontextmanager
async def running(followed: Followed) -> AsyncIterator[None]:
    """Run ``followed`` as a task for the block; stop it after and raise what ended it."""
    task = asyncio.create_task(followed.run())
    try:
        yield
        assert not task.done(), "the follower stopped by itself"
    finally:
        followed.stop()
        await task


def _hold_the_second_commit(monkeypatch: pytest.MonkeyPatch, projectors: set[str]) -> asyncio.Event:
    """From the second transaction of ``projectors`` on that stores an offset, hold it open
    after its writes and its offset, before its commit, for good: the moment to kill."""
    real = Tracking.advance
    held = asyncio.Event()
    seen = [0]

    async def advance(
        self: Tracking, conn: asyncpg.Connection, topic: str, partition: int, next_offset: int
    ) -> None:
        await real(self, conn, topic, partition, next_offset)
        if self.projector in projectors and conn.is_in_transaction():
            seen[0] += 1
            if seen[0] >= 2:
                held.set()
                await asyncio.Event().wait()  # until cancelled: the kill

    monkeypatch.setattr(Tracking, "advance", advance)
    return held


async def _commit_at_zero(kafka: KafkaSettings, topic: str, group: str) -> None:
    consumer = AIOKafkaConsumer(bootstrap_servers=kafka.bootstrap, group_id=group)
    await consumer.start()
    try:
        partitions = [TopicPartition(topic, p) for p in range(kafka.partitions)]
        consumer.assign(partitions)
        await consumer.commit({tp: 0 for tp in partitions})
    finally:
        await consumer.stop()


def _group_of(followed: Followed) -> str:
    if isinstance(followed, BeliefProjector):
        return followed.follower.group
    assert isinstance(followed, LogFollower)
    return followed.group


def _split(one: list[int], two: list[int]) -> bool:
    """Whether both hold partitions, and none the same."""
    return bool(one and two and not set(one) & set(two))


def _held(followed: Followed) -> list[int]:
    if isinstance(followed, BeliefProjector):
        return followed.follower.held()
    assert isinstance(followed, LogFollower)
    return followed.held()


def _sinks_of(followed: Followed) -> list[Sink[Any]]:
    if isinstance(followed, BeliefProjector):
        return [followed.sink]
    assert isinstance(followed, LogFollower)
    return list(followed.sinks)


# --- the episodic log's sinks -----------------------------------------------------------


def _turns(tenant: str, count: int, start: int) -> list[TurnAppended]:
    """Turns of four projects (the log's key: they spread over partitions)."""
    return [
        turn(tenant, f"u{n % 3}", f"proj{n % 4}", f"I keep bees number {n}.", seq=n)
        for n in range(start, start + count)
    ]


class MessagesContract(FollowerContract):
    index = True
    embed = True

    def topic(self, kafka: KafkaSettings) -> str:
        return kafka.episodes_topic

    async def publish(self, kafka: KafkaSettings, tenant: str, count: int, *, start: int) -> None:
        async with EpisodeProducer(kafka) as producer:
            await producer.publish_many(_turns(tenant, count, start))

    def follower(self, kafka: KafkaSettings, pool: asyncpg.Pool, *, batch: int) -> Followed:
        sinks: list[Sink[Any]] = []
        if self.index:
            sinks.append(MessageIndex(pool))
        if self.embed:
            sinks.append(MessageVectors(pool, EMBEDDER))
        return follow_messages(kafka, sinks, max_records=batch)

    def trackings(self) -> Sequence[Tracking]:
        generation = EmbeddingGeneration.of(EMBEDDER.model).name
        return [
            *([INDEX_TRACKING] if self.index else []),
            *([vectors_tracking(generation)] if self.embed else []),
        ]

    async def snapshot(self, pool: asyncpg.Pool) -> object:
        messages = await pool.fetch(
            "SELECT tenant, principal, episode_id, message_ordinal, role, content, "
            "source_partition, source_offset FROM message ORDER BY 1, 2, 3, 4"
        )
        stats = await pool.fetch("SELECT * FROM message_scope_stats ORDER BY 1, 2, 3, 4")
        vectors = await pool.fetch(
            "SELECT generation, tenant, principal, item_id, vector FROM embedding_vector "
            "ORDER BY 1, 2, 3, 4"
        )
        return [tuple(r) for r in messages], [tuple(r) for r in stats], [tuple(r) for r in vectors]

    def fetched(self, followed: Followed) -> int:
        assert isinstance(followed, LogFollower)
        return followed.fetched

    def outages(self, followed: Followed) -> int:
        return sum(sink.outages for sink in _sinks_of(followed))


class TestTheMessageIndexHoldsTheFollowersContract(MessagesContract):
    embed = False


class TestTheVectorsHoldTheFollowersContract(MessagesContract):
    index = False


class TestTheIndexAndTheVectorsBehindOneFollowerHoldItsContract(MessagesContract):
    pass


# --- the claims topic's sink: the belief projector ---------------------------------------


class TestTheBeliefProjectorHoldsTheFollowersContract(FollowerContract):
    def topic(self, kafka: KafkaSettings) -> str:
        return kafka.claims_topic

    async def publish(self, kafka: KafkaSettings, tenant: str, count: int, *, start: int) -> None:
        await publish_batches(kafka, city_batches(tenant, start + count)[start:])

    def follower(self, kafka: KafkaSettings, pool: asyncpg.Pool, *, batch: int) -> Followed:
        return BeliefProjector(kafka, pool, max_chunk=batch)

    def trackings(self) -> Sequence[Tracking]:
        return [BELIEFS_TRACKING]

    async def snapshot(self, pool: asyncpg.Pool) -> object:
        return await projection_digest(pool)

    def fetched(self, followed: Followed) -> int:
        assert isinstance(followed, BeliefProjector)
        return followed.follower.fetched

    def outages(self, followed: Followed) -> int:
        assert isinstance(followed, BeliefProjector)
        return followed.outages


# --- a sink written here, over another topic ---------------------------------------------


LEDGER = Tracking("contract-ledger")


class Noted:
    """A record of the ledger's topic, decoded: where it is and what it says."""

    def __init__(self, offset: int, partition: int, said: str) -> None:
        self.offset, self.partition, self.said = offset, partition, said


async def decode_notes(tp: TopicPartition, records: list[ConsumerRecord]) -> list[Noted]:
    """JSON objects with a ``said``; anything else is left out."""
    notes = []
    for record in records:
        with contextlib.suppress(orjson.JSONDecodeError, KeyError, TypeError):
            notes.append(Noted(record.offset, tp.partition, orjson.loads(record.value)["said"]))
    return notes


class Ledger(BatchSink[Noted, None]):
    """Writes each note once, with its place, into ``contract_ledger``."""

    def __init__(self, pool: asyncpg.Pool, name: str = "ledger") -> None:
        super().__init__(pool, LEDGER, name=name)

    async def prepare(self, batch: Batch[Noted]) -> None:
        return None

    async def write(self, conn: asyncpg.Connection, batch: Batch[Noted], prepared: None) -> int:
        await conn.executemany(
            "INSERT INTO contract_ledger (partition, record_offset, said) VALUES ($1, $2, $3)",
            [(n.partition, n.offset, n.said) for n in batch.records],
        )
        return len(batch.records)


class TestASinkOverAnotherTopicHoldsTheFollowersContract(FollowerContract):
    """No ``ON CONFLICT`` in its insert and a primary key on the place: a record written twice
    would fail the test, so exactly-once here is the follower's alone."""

    def topic(self, kafka: KafkaSettings) -> str:
        return kafka.memory_events_topic

    async def prepare(self, pool: asyncpg.Pool) -> None:
        await pool.execute(
            "CREATE TABLE IF NOT EXISTS contract_ledger (partition int, record_offset bigint, "
            "said text NOT NULL, PRIMARY KEY (partition, record_offset))"
        )

    async def publish(self, kafka: KafkaSettings, tenant: str, count: int, *, start: int) -> None:
        producer = AIOKafkaProducer(bootstrap_servers=kafka.bootstrap, enable_idempotence=True)
        await producer.start()
        try:
            for n in range(start, start + count):
                value = orjson.dumps({"said": f"{tenant} note {n}"}) if n % 5 else b"not json"
                await producer.send_and_wait(
                    kafka.memory_events_topic, value, key=str(uuid.UUID(int=n)).encode()
                )
        finally:
            await producer.stop()

    def follower(self, kafka: KafkaSettings, pool: asyncpg.Pool, *, batch: int) -> Followed:
        return LogFollower(
            kafka,
            topic=kafka.memory_events_topic,
            decode=decode_notes,
            sinks=[Ledger(pool)],
            max_records=batch,
        )

    def trackings(self) -> Sequence[Tracking]:
        return [LEDGER]

    async def snapshot(self, pool: asyncpg.Pool) -> object:
        rows = await pool.fetch("SELECT said FROM contract_ledger ORDER BY said")
        return [r["said"] for r in rows]

    def fetched(self, followed: Followed) -> int:
        assert isinstance(followed, LogFollower)
        return followed.fetched

    def outages(self, followed: Followed) -> int:
        return sum(sink.outages for sink in _sinks_of(followed))


async def test_a_log_ending_in_transaction_markers_reads_no_lag_once_taken(
    isolated: Isolated, pool: asyncpg.Pool
) -> None:
    """A transactional producer's commit and abort markers, and an aborted transaction's
    records, take offsets no sink is handed: once the sink has taken every committed record,
    its lag gauge reads 0, not the markers' count (it read 1 for ever after a commit marker)."""
    kafka = isolated.kafka(partitions=1)
    await ensure_topics(kafka)
    await TestASinkOverAnotherTopicHoldsTheFollowersContract().prepare(pool)
    producer = AIOKafkaProducer(
        bootstrap_servers=kafka.bootstrap, transactional_id=f"{isolated.prefix}-notes"
    )
    await producer.start()
    try:
        for n, commit in [(1, True), (2, True), (3, False)]:
            await producer.begin_transaction()
            value = orjson.dumps({"said": f"{isolated.tenant} note {n}"})
            await producer.send_and_wait(kafka.memory_events_topic, value, partition=0)
            await (producer.commit_transaction() if commit else producer.abort_transaction())
    finally:
        await producer.stop()
    ends = await end_offsets(kafka, kafka.memory_events_topic)
    assert ends[0] == 6, "three records and three markers"
    sink = f"ledger-{isolated.prefix}"
    follower = LogFollower(
        kafka, topic=kafka.memory_events_topic, decode=decode_notes, sinks=[Ledger(pool, sink)]
    )

    def lag() -> float | None:
        return REGISTRY.get_sample_value("engram_follower_lag", {"sink": sink, "partition": "0"})

    async with running(follower):

        async def both_committed_taken() -> bool:
            return bool(await pool.fetchval("SELECT count(*) FROM contract_ledger") == 2)

        await wait_until(both_committed_taken, timeout_s=WAIT_S, what="the committed notes")

        async def no_lag() -> bool:
            return lag() == 0

        await wait_until(no_lag, timeout_s=WAIT_S, what="the lag gauge reads 0")
    rows = await pool.fetch("SELECT said FROM contract_ledger ORDER BY record_offset")
    assert [r["said"] for r in rows] == [f"{isolated.tenant} note {n}" for n in (1, 2)]
