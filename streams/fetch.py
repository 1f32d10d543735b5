"""Reading one record back from the log by its position: how an unparked episode is re-formed."""

from __future__ import annotations

import asyncio

from aiokafka import TopicPartition

from engram.infra.log_reading import log_consumer
from engram.infra.settings import KafkaSettings
from engram.streams.pipeline import Record


async def fetch_record(
    settings: KafkaSettings, topic: str, partition: int, offset: int, *, timeout_s: float = 10.0
) -> Record | None:
    consumer = log_consumer(bootstrap=settings.bootstrap, group_id=None)
    await consumer.start()
    try:
        tp = TopicPartition(topic, partition)
        consumer.assign([tp])
        consumer.seek(tp, offset)
        message = await asyncio.wait_for(consumer.getone(), timeout_s)
        if message.offset != offset:
            return None
        return Record(topic, partition, offset, message.timestamp, message.value)
    except TimeoutError:
        return None
    finally:
        await consumer.stop()
