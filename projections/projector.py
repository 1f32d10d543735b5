"""The belief projector: a plain aiokafka consumer of ``engram.claims``.

Offsets are owned by PostgreSQL, not by the consumer group: on every assignment the consumer
seeks to the offsets stored beside the beliefs, and each batch advances its offset in the same
transaction as its rows. Kafka's committed offsets are written too, but only as a lag gauge.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable

import asyncpg
import structlog
from aiokafka import AIOKafkaConsumer, AIOKafkaProducer, ConsumerRebalanceListener, TopicPartition
from pydantic import ValidationError

from engram.settings import KafkaSettings
from projections.belief_store import project_batch, stored_offsets
from projections.memory_events import drain_outbox
from projections.outcome import BatchOutcome
from schemas.claims import decode_claims_batch

log = structlog.get_logger(__name__)


class _SeekToStoredOffsets(ConsumerRebalanceListener):  # type: ignore[misc]
    def __init__(self, consumer: AIOKafkaConsumer, pool: asyncpg.Pool, topic: str):
        self._consumer = consumer
        self._pool = pool
        self._topic = topic

    async def on_partitions_revoked(self, revoked: set[TopicPartition]) -> None:
        return None

    async def on_partitions_assigned(self, assigned: set[TopicPartition]) -> None:
        offsets = await stored_offsets(self._pool, self._topic)
        for tp in assigned:
            if tp.partition in offsets:
                self._consumer.seek(tp, offsets[tp.partition])
            else:
                await self._consumer.seek_to_beginning(tp)
        log.info("projector.assigned", partitions=sorted(tp.partition for tp in assigned))


class BeliefProjector:
    """Consumes claims batches until stopped; one principal's batches stay in order because
    ``engram.claims`` is keyed by tenant/principal and a partition is processed in order."""

    def __init__(
        self,
        settings: KafkaSettings,
        pool: asyncpg.Pool,
        on_outcome: Callable[[BatchOutcome], None] | None = None,
    ):
        self._settings = settings
        self._pool = pool
        self._on_outcome = on_outcome
        self._stopping = asyncio.Event()
        self.projected = 0

    def stop(self) -> None:
        self._stopping.set()

    async def run(self) -> None:
        consumer = AIOKafkaConsumer(
            bootstrap_servers=self._settings.bootstrap,
            group_id=f"{self._settings.group_id}-beliefs",
            enable_auto_commit=False,
            auto_offset_reset="earliest",
            session_timeout_ms=self._settings.session_timeout_ms,
            heartbeat_interval_ms=max(self._settings.session_timeout_ms // 3, 500),
            isolation_level="read_committed",
        )
        consumer.subscribe(
            [self._settings.claims_topic],
            listener=_SeekToStoredOffsets(consumer, self._pool, self._settings.claims_topic),
        )
        producer = AIOKafkaProducer(
            bootstrap_servers=self._settings.bootstrap, enable_idempotence=True, acks="all"
        )
        await producer.start()
        await consumer.start()
        topic = self._settings.memory_events_topic
        try:
            await drain_outbox(self._pool, producer, topic)
            while not self._stopping.is_set():
                batches = await consumer.getmany(timeout_ms=200, max_records=500)
                for records in batches.values():
                    for record in records:
                        if self._stopping.is_set():
                            break
                        await self._project(
                            record.topic, record.partition, record.offset, record.value
                        )
                # Kafka's own offsets are informational (lag); the stored ones are the truth,
                # so a record skipped on stop is simply read again after the next seek.
                if batches:
                    await drain_outbox(self._pool, producer, topic)
                if batches and not self._stopping.is_set():
                    await consumer.commit()
        finally:
            await consumer.stop()
            await producer.stop()

    async def _project(self, topic: str, partition: int, offset: int, value: bytes | None) -> None:
        try:
            batch = decode_claims_batch(value or b"")
        except ValidationError as error:
            # The formation agent is the only writer of this topic; a bad record here is a bug,
            # logged loudly and skipped so the principal's later batches still project.
            log.error(
                "projector.bad_batch",
                topic=topic,
                partition=partition,
                offset=offset,
                error=str(error)[:500],
            )
            return
        async with self._pool.acquire() as conn:
            outcome = await project_batch(
                conn, batch, topic=topic, partition=partition, offset=offset
            )
        self.projected += 1
        if self._on_outcome is not None:
            self._on_outcome(outcome)
