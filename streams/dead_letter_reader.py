"""Reading the dead-letter topic back for operators: reasons and positions, never the bytes."""

from __future__ import annotations

from dataclasses import dataclass

from engram.infra.log_reading import log_consumer
from engram.infra.settings import KafkaSettings


@dataclass(frozen=True)
class DeadLetterView:
    offset: int
    reason: str
    detail: str
    source_topic: str
    source_partition: int
    source_offset: int
    size_bytes: int


async def read_dead_letters(settings: KafkaSettings, *, limit: int = 100) -> list[DeadLetterView]:
    consumer = log_consumer(
        settings.dlq_topic,
        bootstrap=settings.bootstrap,
        group_id=None,
        auto_offset_reset="earliest",
    )
    await consumer.start()
    letters: list[DeadLetterView] = []
    try:
        ends = await consumer.end_offsets(list(consumer.assignment()))
        remaining = {tp: end for tp, end in ends.items() if end > 0}
        while remaining and len(letters) < limit:
            for tp, records in (await consumer.getmany(timeout_ms=1000)).items():
                for record in records:
                    headers = {k: v.decode(errors="replace") for k, v in record.headers}
                    letters.append(
                        DeadLetterView(
                            offset=record.offset,
                            reason=headers.get("engram.reason", "?"),
                            detail=headers.get("engram.detail", ""),
                            source_topic=headers.get("engram.source.topic", "?"),
                            source_partition=int(headers.get("engram.source.partition", -1)),
                            source_offset=int(headers.get("engram.source.offset", -1)),
                            size_bytes=len(record.value or b""),
                        )
                    )
                    if record.offset + 1 >= remaining.get(tp, 0):
                        remaining.pop(tp, None)
    finally:
        await consumer.stop()
    return letters[:limit]
