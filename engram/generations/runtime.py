"""What a generation runs with: its consumer groups and topics, and how far behind the log it is.

A generation other than ``public`` reads the same ``engram.episodes`` under a consumer group
of its own (``<group>-<id>``, so a new one starts at offset 0) and writes a claims topic,
memory-events topic and dead-letter topic of its own (``<topic>.<id>``): a shadow generation's
batches never reach the live projector, and its memory events never reach the live
subscribers. ``public``, the first generation, keeps the base names.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass

import asyncpg
from aiokafka import TopicPartition
from aiokafka.admin import AIOKafkaAdminClient

from engram.generations.registry import Generation
from engram.infra.log_reading import log_consumer
from engram.infra.settings import KafkaSettings, Settings, StateSettings


def generation_kafka(kafka: KafkaSettings, generation: Generation) -> KafkaSettings:
    if generation.is_public:
        return kafka
    gid = generation.kafka_suffix
    return kafka.model_copy(
        update={
            "group_id": f"{kafka.group_id}-{gid}",
            "claims_topic": f"{kafka.claims_topic}.{gid}",
            "memory_events_topic": f"{kafka.memory_events_topic}.{gid}",
            "dlq_topic": f"{kafka.dlq_topic}.{gid}",
        }
    )


def generation_settings(settings: Settings, generation: Generation) -> Settings:
    """The settings of a process that forms and projects into ``generation``; faust's local
    data goes in a directory of the generation's own."""
    if generation.is_public:
        return settings
    state = StateSettings(dir=settings.state.dir / "generations" / generation.kafka_suffix)
    return Settings(
        kafka=generation_kafka(settings.kafka, generation),
        database=settings.database,
        model=settings.model,
        formation=settings.formation,
        api=settings.api,
        worker=settings.worker,
        state=state,
    )


@dataclass(frozen=True)
class GenerationLag:
    """Records of the log a generation has not yet formed, and claims batches it has not yet
    projected; both zero means it is at the head of the log."""

    head: int
    formation: int
    projection: int

    @property
    def caught_up(self) -> bool:
        return self.formation == 0 and self.projection == 0

    @property
    def total(self) -> int:
        return self.formation + self.projection


async def generation_lag(
    kafka: KafkaSettings, db: asyncpg.Pool | asyncpg.Connection, schema: str
) -> GenerationLag:
    """Compare the topics' end offsets with the generation's committed formation offsets (its
    consumer group) and its stored projection offsets (its schema's ``projector_offset``)."""
    # In this order: formation commits an episode only after its batch is in the claims
    # topic, so claims' end offsets read after the committed ones include every batch of the
    # episodes counted as formed, and "caught up" is never claimed early.
    episodes_end = await end_offsets(kafka, kafka.episodes_topic)
    committed = await committed_offsets(kafka, kafka.group_id, kafka.episodes_topic)
    formed = await past_gaps(kafka, kafka.episodes_topic, committed, episodes_end)
    claims_end = await end_offsets(kafka, kafka.claims_topic)
    rows = await db.fetch(
        f'SELECT partition, next_offset FROM "{schema}".projector_offset WHERE topic = $1',
        kafka.claims_topic,
    )
    projected = {row["partition"]: row["next_offset"] for row in rows}
    return GenerationLag(
        head=sum(episodes_end.values()),
        formation=_behind(episodes_end, formed),
        projection=_behind(claims_end, projected),
    )


def _behind(end: dict[int, int], reached: dict[int, int]) -> int:
    return sum(max(offset - reached.get(partition, 0), 0) for partition, offset in end.items())


async def end_offsets(kafka: KafkaSettings, topic: str) -> dict[int, int]:
    """Each partition's end offset (none for a topic that does not exist yet)."""
    admin = AIOKafkaAdminClient(bootstrap_servers=kafka.bootstrap)
    await admin.start()
    try:
        [described] = await admin.describe_topics([topic])
    finally:
        await admin.close()
    tps = [TopicPartition(topic, p["partition"]) for p in described["partitions"]]
    if described["error_code"] or not tps:
        return {}
    consumer = log_consumer(bootstrap=kafka.bootstrap)
    await consumer.start()
    try:
        ends = await consumer.end_offsets(tps)
    finally:
        await consumer.stop()
    return {tp.partition: offset for tp, offset in ends.items()}


async def past_gaps(
    kafka: KafkaSettings,
    topic: str,
    reached: dict[int, int],
    ends: dict[int, int],
    *,
    timeout_s: float = 5.0,
) -> dict[int, int]:
    """``reached`` with each partition moved to its end where no committed record lies between.

    A consumer commits (or stores) the offset after the last record it processed, but the log's
    end can lie further: a transaction's commit or abort marker and an aborted transaction's
    records take offsets that no reader of committed records is ever handed, so after the last
    record of a log the inbox intake appended, the committed offset stays one short of the end
    for good. Reading on from ``reached`` (committed records only) tells a gap from a record
    not yet processed: no record before the end, and the partition has reached it. A partition
    not read through within ``timeout_s`` keeps its offset: it is counted behind, never early.
    """
    behind = [p for p, end in ends.items() if reached.get(p, 0) < end]
    if not behind:
        return dict(reached)
    moved = dict(reached)
    consumer = log_consumer(bootstrap=kafka.bootstrap)
    await consumer.start()
    try:
        for partition in behind:
            tp = TopicPartition(topic, partition)
            consumer.assign([tp])
            consumer.seek(tp, reached.get(partition, 0))
            deadline = asyncio.get_running_loop().time() + timeout_s
            while asyncio.get_running_loop().time() < deadline:
                if (await consumer.getmany(tp, timeout_ms=200, max_records=1)).get(tp):
                    break  # a record not yet processed: behind
                if await consumer.position(tp) >= ends[partition]:
                    moved[partition] = ends[partition]
                    break
    finally:
        await consumer.stop()
    return moved


async def committed_offsets(kafka: KafkaSettings, group: str, topic: str) -> dict[int, int]:
    admin = AIOKafkaAdminClient(bootstrap_servers=kafka.bootstrap)
    await admin.start()
    try:
        offsets = await admin.list_consumer_group_offsets(group)
    finally:
        await admin.close()
    return {
        tp.partition: meta.offset
        for tp, meta in offsets.items()
        if tp.topic == topic and meta.offset >= 0
    }
