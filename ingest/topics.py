"""The topics Engram owns, created with explicit settings rather than broker defaults.

The episodic log is kept forever (``retention.ms=-1``) and never compacted: it is the only
ground truth, and re-derivation replays it from the start.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass, field

import structlog
from aiokafka.admin import AIOKafkaAdminClient, NewTopic
from aiokafka.errors import TopicAlreadyExistsError

from engram.infra.settings import KafkaSettings

log = structlog.get_logger(__name__)

FOREVER = {"retention.ms": "-1", "cleanup.policy": "delete"}


@dataclass(frozen=True)
class TopicSpec:
    name: str
    partitions: int
    config: dict[str, str] = field(default_factory=dict)


def engram_topics(settings: KafkaSettings) -> list[TopicSpec]:
    return [
        TopicSpec(settings.episodes_topic, settings.partitions, dict(FOREVER)),
        TopicSpec(settings.claims_topic, settings.partitions, dict(FOREVER)),
        TopicSpec(settings.dlq_topic, 1, dict(FOREVER)),
        TopicSpec(settings.memory_events_topic, settings.partitions, {"retention.ms": "604800000"}),
        TopicSpec(settings.inbox_topic, settings.partitions, inbox_config(settings)),
    ]


def inbox_config(settings: KafkaSettings) -> dict[str, str]:
    """Bounded retention, and segments that roll at least hourly: Kafka deletes whole closed
    segments only, so with the default week-long segments a record could outlive its
    retention by another week."""
    retention = settings.inbox_retention_ms
    return {
        "retention.ms": str(retention),
        "segment.ms": str(min(retention, 3_600_000)),
        "cleanup.policy": "delete",
    }


async def ensure_topics(settings: KafkaSettings) -> None:
    """Create any missing Engram topic; existing topics are left exactly as they are."""
    admin = AIOKafkaAdminClient(bootstrap_servers=settings.bootstrap)
    await admin.start()
    try:
        existing = set(await admin.list_topics())
        missing = [spec for spec in engram_topics(settings) if spec.name not in existing]
        if not missing:
            return
        new_topics = [
            NewTopic(spec.name, spec.partitions, 1, topic_configs=spec.config) for spec in missing
        ]
        # another process may win the race; the topic is then there, which is all we need
        with contextlib.suppress(TopicAlreadyExistsError):
            await admin.create_topics(new_topics)
        log.info("topics.created", topics=[spec.name for spec in missing])
    finally:
        await admin.close()
