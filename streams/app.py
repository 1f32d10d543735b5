"""The faust app: topics, the formation agent, and the belief projector as an app task.

Registration is explicit: :func:`build_app` declares the topics and wires each agent to a
short loop that decodes, calls ordinary code and hands the result on.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

import faust
import orjson
import structlog

from engram.settings import Settings
from schemas.claims import SourcePosition
from schemas.common import principal_key
from streams.dead_letters import DeadLetter, admit_record
from streams.formation_stage import FormationStage

log = structlog.get_logger(__name__)


@dataclass
class EngramStreams:
    app: faust.App
    episodes: faust.TopicT
    claims: faust.TopicT
    dead_letters: faust.TopicT


def build_app(
    settings: Settings, stage: FormationStage, *, with_projector: bool = True
) -> EngramStreams:
    kafka = settings.kafka
    app = faust.App(
        kafka.group_id,
        broker=f"kafka://{kafka.bootstrap}",
        value_serializer="raw",
        key_serializer="raw",
        web_enabled=False,
        web_host="127.0.0.1",
        broker_session_timeout=kafka.session_timeout_ms / 1000,
        broker_heartbeat_interval=max(kafka.session_timeout_ms / 3000, 0.5),
        topic_partitions=kafka.partitions,
        topic_replication_factor=1,
        consumer_auto_offset_reset="earliest",
        producer_acks=-1,
        producer_max_request_size=max(kafka.max_event_bytes * 2, 1_048_576),
        consumer_max_fetch_size=max(kafka.max_event_bytes * 2, 1_048_576),
        stream_wait_empty=False,
    )
    streams = EngramStreams(
        app=app,
        episodes=_raw_topic(app, kafka.episodes_topic),
        claims=_raw_topic(app, kafka.claims_topic),
        dead_letters=_raw_topic(app, kafka.dlq_topic),
    )
    register_formation_agent(streams, stage, max_bytes=kafka.max_event_bytes)
    if with_projector:
        register_projector_task(streams, settings)
    return streams


def _raw_topic(app: faust.App, name: str) -> faust.TopicT:
    return app.topic(
        name, key_type=bytes, value_type=bytes, key_serializer="raw", value_serializer="raw"
    )


def register_formation_agent(
    streams: EngramStreams, stage: FormationStage, *, max_bytes: int
) -> None:
    async def form(stream: faust.StreamT[bytes]) -> AsyncIterator[None]:
        async for event in stream.events():
            message = event.message
            await form_one(
                streams,
                stage,
                message.value,
                topic=message.topic,
                partition=message.partition,
                offset=message.offset,
                max_bytes=max_bytes,
            )
            yield None

    streams.app.agent(streams.episodes, name="engram.formation")(form)


async def form_one(
    streams: EngramStreams,
    stage: FormationStage,
    raw: bytes | None,
    *,
    topic: str,
    partition: int,
    offset: int,
    max_bytes: int,
) -> None:
    """Form one record, or dead-letter it; waits until the result is acknowledged by Kafka so
    the consumer offset can never commit past an episode whose batch is not in the log."""
    admitted = admit_record(raw, max_bytes=max_bytes)
    if isinstance(admitted, DeadLetter):
        log.warning(
            "formation.dead_letter",
            reason=admitted.reason.value,
            partition=partition,
            offset=offset,
            detail=admitted.detail,
        )
        sent = await streams.dead_letters.send(
            key=f"{topic}/{partition}/{offset}".encode(),
            value=raw or b"",
            headers=admitted.headers(topic=topic, partition=partition, offset=offset),
        )
        await sent
        return
    source = SourcePosition(topic=topic, partition=partition, offset=offset)
    batch = await stage.form(admitted, source)
    sent = await streams.claims.send(
        key=principal_key(batch.tenant, batch.principal),
        value=orjson.dumps(batch.model_dump(mode="json")),
    )
    await sent
    log.debug(
        "formation.formed",
        episode=str(batch.episode_id),
        admitted=batch.counts.admitted,
        refused=batch.counts.refused,
        partition=partition,
        offset=offset,
    )


def register_projector_task(streams: EngramStreams, settings: Settings) -> None:
    async def project() -> None:
        from projections.db import create_pool
        from projections.projector import BeliefProjector

        pool = await create_pool(settings.database)
        try:
            await BeliefProjector(settings.kafka, pool).run()
        finally:
            await pool.close()

    streams.app.task(project)


def run_worker(streams: EngramStreams, *, loglevel: str = "info") -> Any:
    """Run the faust worker in the foreground until SIGINT/SIGTERM."""
    from faust import Worker

    worker = Worker(streams.app, loglevel=loglevel, quiet=True, redirect_stdouts=False)
    return worker.execute_from_commandline()
