"""The faust app: topics, the formation agent, the requeue timer and health.

Registration is explicit: :func:`build_app` declares the topics and wires each agent to a
short loop that hands records to ordinary code. The agent reads one partition in log order and
acknowledges manually: the pipeline forms projects concurrently and acknowledges in order.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from functools import partial
from typing import Any, cast

import faust
import structlog

from engram.infra.backoff import Backoff
from engram.infra.db import UNAVAILABLE, create_pool, report_unavailable, retry_while_unavailable
from engram.infra.health import serve_health
from engram.infra.heap import freeze_startup_heap
from engram.infra.metrics import CONSUMER_LAG
from engram.infra.settings import Settings
from engram.sealing.opening import open_sealer
from engram.streams.faust_private import aiokafka_producer
from engram.streams.fetch import fetch_record
from engram.streams.formation_stage import FormationStage
from engram.streams.pipeline import FormationPipeline, Record, Send, Serves, serves_everyone
from engram.streams.retrying import RetryPolicy
from engram.streams.transport import EngramApp
from engram.watermarks import backlog

log = structlog.get_logger(__name__)

PRODUCER_BATCH_BYTES = 262_144
"""Records per produce request, in bytes: well under the broker's 1 MiB ``message.max.bytes``."""


@dataclass
class EngramStreams:
    app: faust.App
    episodes: faust.TopicT
    claims: faust.TopicT
    dead_letters: faust.TopicT
    settings: Settings
    schema: str | None = None
    """The generation's PostgreSQL schema its backlog lives in (None: ``public``)."""
    serves: Serves = serves_everyone
    pipeline: FormationPipeline | None = None
    last_read: dict[int, int] = field(default_factory=dict)
    _ready: asyncio.Lock = field(default_factory=asyncio.Lock)

    async def ensure_pipeline(self, stage: FormationStage) -> FormationPipeline:
        async with self._ready:
            if self.pipeline is None:
                settings, schema = self.settings.database, self.schema
                pool = await retry_while_unavailable(
                    lambda: create_pool(settings, role="engram-formation", schema=schema),
                    what="formation.connect",
                )
                formation = self.settings.formation
                sealer = await open_sealer(self.settings.keys, pool)
                self.pipeline = FormationPipeline(
                    stage,
                    pool,
                    send_claims=await self.producer_send(self.settings.kafka.claims_topic),
                    send_dead_letter=await self.producer_send(self.settings.kafka.dlq_topic),
                    ack=lambda event: event.ack(),
                    retry=RetryPolicy(
                        formation.max_attempts, formation.retry_after_s, formation.turn_budget_s
                    ),
                    max_bytes=self.settings.kafka.max_event_bytes,
                    max_in_flight=formation.max_in_flight,
                    publish_backoff=Backoff(
                        formation.publish_retry_after_s, formation.publish_retry_max_s
                    ),
                    serves=self.serves,
                    sealer=sealer,
                )
            return self.pipeline

    async def producer_send(self, topic: str) -> Send:
        """aiokafka's own send, bound to a topic, on the producer faust starts and stops.
        faust's ``Topic.send`` wraps each record in a future message, runs its sensors and may
        take a turn of the event loop first; faust's ``Producer.send`` fires the app's
        ``on_produce_message`` signal (no receivers here: ~10% of the framework's CPU a turn)
        and wraps the client's errors. Formation uses none of that, and
        :mod:`engram.streams.publishing` classifies the client's own errors."""
        producer = await self.app.maybe_start_producer()
        client = aiokafka_producer(producer)  # faust's AIOKafkaProducer, started
        return partial(client.send, topic)


def build_app(
    settings: Settings,
    stage: FormationStage,
    *,
    schema: str | None = None,
    serves: Serves = serves_everyone,
) -> EngramStreams:
    """The formation worker's app. Another stage (the belief projector) can share its event
    loop as a task: ``engram.streams.app.task(...)``, wired by the entry point that wants both.

    ``schema`` and ``serves`` place it in a generation: where its backlog is written and which
    principals' episodes it forms (the settings carry the generation's groups and topics)."""
    streams = declare_app(settings, schema=schema, serves=serves)
    register_formation_agent(streams, stage)
    register_requeue_timer(streams, stage)
    register_lag_timer(streams)
    register_health_server(streams)
    return streams


def declare_app(
    settings: Settings, *, schema: str | None = None, serves: Serves = serves_everyone
) -> EngramStreams:
    """The faust app and its topics, with no agent or timer registered yet."""
    kafka = settings.kafka
    datadir = settings.state.dir / "faust"
    datadir.mkdir(parents=True, exist_ok=True)  # faust creates only the last level
    app = EngramApp(
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
        # Deliberate, not faust's 1,200 s: aiokafka has one timeout for a request, a queued
        # batch's life and a blocked send; past it the pipeline's own retry takes over.
        producer_request_timeout=kafka.producer_request_timeout_ms / 1000,
        producer_max_request_size=kafka.producer_max_request_bytes,
        # aiokafka keeps one open batch per partition and one request in flight per broker; a
        # send that finds the batch full waits for it to go out. At the default 16 KiB that is
        # about four claims batches per round trip, which capped formation's publishing.
        producer_max_batch_size=PRODUCER_BATCH_BYTES,
        consumer_max_fetch_size=max(kafka.max_event_bytes * 2, 1_048_576),
        stream_wait_empty=False,
        datadir=str(datadir),
    )
    return EngramStreams(
        app=app,
        episodes=_raw_topic(app, kafka.episodes_topic),
        claims=_raw_topic(app, kafka.claims_topic),
        dead_letters=_raw_topic(app, kafka.dlq_topic),
        settings=settings,
        schema=schema,
        serves=serves,
    )


def _raw_topic(app: faust.App, name: str) -> faust.TopicT:
    return app.topic(
        name, key_type=bytes, value_type=bytes, key_serializer="raw", value_serializer="raw"
    )


def register_formation_agent(streams: EngramStreams, stage: FormationStage) -> None:
    async def form(stream: faust.StreamT[bytes]) -> None:
        """A plain coroutine agent: an async-generator agent makes faust run its sink delivery
        (``Agent._slurp``) for every value it yields, and this agent has nothing to yield."""
        pipeline = await streams.ensure_pipeline(stage)
        manual: Any = cast(Any, stream).noack()  # acknowledged by the pipeline, in log order
        async for event in manual.events():
            message = event.message
            streams.last_read[message.partition] = message.offset
            record = Record(
                message.topic,
                message.partition,
                message.offset,
                message.timestamp and int(message.timestamp * 1000),
                message.value,
            )
            await pipeline.accept(record, event)

    streams.app.agent(streams.episodes, name="engram.formation")(form)

    async def on_revoked(sender: Any, *args: Any, **kwargs: Any) -> None:
        revoked = kwargs.get("revoked", args[0] if args else set())
        if streams.pipeline is not None:
            for tp in revoked:
                if tp.topic == streams.settings.kafka.episodes_topic:
                    streams.pipeline.acks.forget(tp.partition)

    streams.app.on_partitions_revoked.connect(on_revoked)  # type: ignore[arg-type]

    async def on_shutdown(sender: Any, *args: Any, **kwargs: Any) -> None:
        """After the consumer has stopped: cancel attempts in flight (shutdown never counts as
        a failed attempt; their episodes were not acknowledged, so they are read again)."""
        if streams.pipeline is not None:
            await streams.pipeline.close()
            await streams.pipeline.pending.close()
            await streams.pipeline.pool.close()

    streams.app.on_before_shutdown.connect(on_shutdown)  # type: ignore[arg-type]


def register_requeue_timer(streams: EngramStreams, stage: FormationStage) -> None:
    """Pick up unparked episodes and form them again, reading them back from the log."""

    async def requeue() -> None:
        pipeline = await streams.ensure_pipeline(stage)
        poll_s = streams.settings.formation.requeue_poll_s
        try:
            entries = await backlog.claim_requeued(pipeline.pool)
        except UNAVAILABLE as error:
            report_unavailable("formation.requeue", error, poll_s)  # the next tick tries again
            return
        for entry in entries:
            raw = await fetch_record(
                streams.settings.kafka, entry.topic, entry.partition, entry.offset
            )
            if raw is None:
                log.error(
                    "formation.requeued_missing", partition=entry.partition, offset=entry.offset
                )
                continue
            await pipeline.reform(raw)

    streams.app.timer(streams.settings.formation.requeue_poll_s, name="engram.requeue")(requeue)


def register_lag_timer(streams: EngramStreams) -> None:
    async def measure_lag() -> None:
        for tp in streams.app.consumer.assignment():
            if tp.topic != streams.settings.kafka.episodes_topic:
                continue
            highwater = streams.app.consumer.highwater(tp)
            if highwater is not None:
                read = streams.last_read.get(tp.partition, -1)
                CONSUMER_LAG.labels(str(tp.partition)).set(max(highwater - read - 1, 0))

    streams.app.timer(5.0, name="engram.lag")(measure_lag)


def register_health_server(streams: EngramStreams) -> None:
    worker = streams.settings.worker
    if worker.http_port == 0:
        return

    async def serve() -> None:
        await serve_health(
            lambda: worker_readiness(
                streams,
                stall_after_s=worker.stall_after_s,
                publish_stall_after_s=worker.publish_stall_after_s,
            ),
            host=worker.http_host,
            port=worker.http_port,
        )

    streams.app.task(serve)


def run_worker(streams: EngramStreams, *, loglevel: str = "info") -> Any:
    """Run the faust worker in the foreground until SIGINT/SIGTERM."""
    worker = faust.Worker(streams.app, loglevel=loglevel, quiet=True, redirect_stdouts=False)
    # At WARN and above faust sets the root logger to DEBUG so a terminal spinner can spin on
    # every record: each debug line of aiokafka and faust (several per event) then builds a
    # LogRecord only to drop it. No spinner keeps the root logger at ``loglevel``.
    worker.spinner = None
    # As `engram projector` and `engram api` do: the collector's full passes skip what start-up
    # built (modules, the policy, faust's and the clients' objects), as they would find none of
    # it garbage. What the loop allocates later is collected as before.
    freeze_startup_heap()
    return worker.execute_from_commandline()


def worker_readiness(
    streams: EngramStreams, *, stall_after_s: float, publish_stall_after_s: float
) -> tuple[bool, str]:
    """Unready while a record waits on Kafka longer than ``publish_stall_after_s`` (a broker
    down or unreachable: seconds), or an episode has been in flight longer than
    ``stall_after_s`` (forming includes a slow model's retries, so that bound is minutes)."""
    pipeline = streams.pipeline
    if pipeline is None:
        return False, "formation pipeline not started"
    if not streams.app.consumer.assignment():
        return False, "no partitions assigned"
    waiting = pipeline.oldest_unacknowledged_publish_s()
    if waiting > publish_stall_after_s:
        return False, (
            f"a record has waited {waiting:.0f}s for Kafka's acknowledgement "
            f"(> {publish_stall_after_s:.0f}s): is the broker reachable?"
        )
    oldest = pipeline.oldest_in_flight_s()
    if oldest > stall_after_s:
        return False, f"oldest in-flight episode has waited {oldest:.0f}s (> {stall_after_s:.0f}s)"
    return True, "ready"
