"""The topics Engram owns, created with explicit settings rather than broker defaults.

The episodic log is kept forever (``retention.ms=-1``) and never compacted: it is the only
ground truth, and re-derivation replays it from the start.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass, field

import structlog
from aiokafka.admin import AIOKafkaAdminClient, NewTopic
from aiokafka.admin.config_resource import ConfigResource, ConfigResourceType
from aiokafka.errors import KafkaError, TopicAlreadyExistsError

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


INBOX_FILE_DELETE_DELAY_MS = 1000
"""How long a deleted inbox segment's file waits before the broker removes it (Kafka's
default is a minute, during which the file still holds the plaintext)."""


def inbox_config(settings: KafkaSettings) -> dict[str, str]:
    """Keep the inbox's plaintext off the broker's disk soon after the intake moved it.

    Kafka deletes whole closed segments only, once the log start offset (moved by the intake's
    ``DeleteRecords``) has passed them: so segments are short (``segment.ms``: the intake rolls
    one with a marker record once it is older than that, :mod:`engram.ingest.inbox`), their files are
    removed a second after deletion, and timestamps are the broker's (``LogAppendTime``), so a
    producer's clock can neither hold a segment open nor expire a record early. Retention is
    the bound for what no intake reached."""
    retention = settings.inbox_retention_ms
    return {
        "retention.ms": str(retention),
        "segment.ms": str(min(retention, settings.inbox_segment_ms)),
        "file.delete.delay.ms": str(INBOX_FILE_DELETE_DELAY_MS),
        "message.timestamp.type": "LogAppendTime",
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


async def topic_configs(settings: KafkaSettings, topic: str) -> dict[str, str | None]:
    """A topic's configuration as the broker reports it (its own settings and the defaults)."""
    admin = AIOKafkaAdminClient(bootstrap_servers=settings.bootstrap)
    await admin.start()
    try:
        [response] = await admin.describe_configs([ConfigResource(ConfigResourceType.TOPIC, topic)])
    finally:
        await admin.close()
    [resource] = response.resources
    return {entry[0]: entry[1] for entry in resource[4]}


async def topic_retention_ms(settings: KafkaSettings, topic: str) -> int | None:
    """How long ``topic`` keeps records (-1: forever), or None when the broker cannot say."""
    try:
        value = (await topic_configs(settings, topic)).get("retention.ms")
    except (KafkaError, ValueError) as error:
        log.warning("topics.retention_unknown", topic=topic, error=str(error))
        return None
    return None if value is None else int(value)


async def source_partitions(bootstrap: str, topic: str) -> int:
    """How many partitions ``topic`` has; :class:`LookupError` when it does not exist."""
    admin = AIOKafkaAdminClient(bootstrap_servers=bootstrap)
    await admin.start()
    try:
        [described] = await admin.describe_topics([topic])
    finally:
        await admin.close()
    count = len(described["partitions"])
    if described["error_code"] or not count:
        raise LookupError(f"topic {topic!r} does not exist")
    return count
