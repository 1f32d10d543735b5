"""Does the episodic log hold people's words in clear? The start-up check's answer.

A deployment that ran before log encryption was on by default has a plaintext log: every turn
in it stays readable, and forgetting a person cannot reach it, until the log is copied sealed
(``engram log encrypt``, docs/privacy.md "Existing logs"). Reading the whole log at every start
would cost as much as the log is long, so the survey reads the first and the last records of
each partition: a log that began in clear shows at its start, and a writer that still appends
in clear (a process with encryption turned off, a producer that bypasses the doors) shows at its
end. A stretch in clear in the middle of a long log is not seen; ``engram log encrypt`` copies
it whole in any case.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from aiokafka import AIOKafkaConsumer, TopicPartition
from pydantic import ValidationError

from engram.infra.log_reading import log_consumer
from engram.infra.settings import KafkaSettings
from engram.ingest.topics import source_partitions
from engram.schemas.log import decode_log_event
from engram.sealing.events import words_on_log

SAMPLE = 50
"""Records read at each end of each partition."""
READ_S = 10.0
"""The longest one end of one partition is read for."""


@dataclass(frozen=True)
class LogSurvey:
    topic: str
    read: int
    in_clear: int
    sealed: int

    def advice(self) -> str | None:
        """What to tell the operator when the log holds words in clear; None when it does not."""
        if not self.in_clear:
            return None
        return (
            f"{self.topic} holds people's words in clear ({self.in_clear} of the {self.read} "
            "records read at the ends of its partitions): they stay readable, and forgetting a "
            "person cannot reach them, until the log is copied sealed — `engram log encrypt --to "
            f"{self.topic}.sealed`, then re-derive from it and delete the plaintext topics "
            '(docs/privacy.md, "Existing logs")'
        )


def _ranges(start: int, end: int, sample: int) -> list[tuple[int, int]]:
    """The offsets to read: the first ``sample`` and the last ``sample``, never twice."""
    head = (start, min(start + sample, end))
    tail = (max(end - sample, head[1]), end)
    return [r for r in (head, tail) if r[0] < r[1]]


async def survey_log(settings: KafkaSettings, *, sample: int = SAMPLE) -> LogSurvey:
    """Read the ends of every partition of the episodic log and count words in clear."""
    topic = settings.episodes_topic
    try:
        count = await source_partitions(settings.bootstrap, topic)
    except LookupError:
        return LogSurvey(topic, 0, 0, 0)  # no log yet: nothing in clear
    consumer = log_consumer(
        bootstrap=settings.bootstrap,
        max_partition_fetch_bytes=max(settings.max_event_bytes * 2, 1_048_576),
    )
    await consumer.start()
    read = in_clear = sealed = 0
    try:
        partitions = [TopicPartition(topic, p) for p in range(count)]
        consumer.assign(partitions)
        starts = await consumer.beginning_offsets(partitions)
        ends = await consumer.end_offsets(partitions)
        for tp in partitions:
            for first, last in _ranges(starts[tp], ends[tp], sample):
                for words in await _read(consumer, tp, first, last):
                    read += 1
                    in_clear += words == "clear"
                    sealed += words == "sealed"
    finally:
        await consumer.stop()
    return LogSurvey(topic, read, in_clear, sealed)


async def _read(consumer: AIOKafkaConsumer, tp: TopicPartition, first: int, last: int) -> list[str]:
    """How each record in [first, last) holds words: clear, sealed, none, or invalid. A start
    must not hang on a partition that does not answer: what ``READ_S`` gave is what counts."""
    consumer.seek(tp, first)
    found: list[str] = []
    deadline = time.monotonic() + READ_S
    while await consumer.position(tp) < last and time.monotonic() < deadline:
        batch = (await consumer.getmany(tp, timeout_ms=1000)).get(tp, [])
        for record in batch:
            if record.offset >= last:
                return found
            try:
                found.append(words_on_log(decode_log_event(record.value or b"")))
            except ValidationError:
                found.append("invalid")
    return found
