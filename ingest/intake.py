"""The HTTP door to the log: episodes checked whole, then appended by one long-lived producer.

A request's episodes are validated (by the caller, with the contract's models) and measured
here *before* the first is sent, so a bad or oversized one refuses the whole request and
nothing is appended. The producer is started on the first append, not at start-up, so the API
serves reads while Kafka is down; when Kafka fails it is dropped and the next append connects
afresh.

What this cannot promise: if the broker fails *between* two sends of one batch, the episodes
sent before the failure stay in the log (it is append-only and Kafka has no multi-record undo
without transactional consumers). The caller gets a 503 and retries the whole batch; the
episodes that landed twice form once, because formation's identities derive from the
episode's tenant, principal, project and ``event_id``.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

import structlog
from aiokafka.errors import KafkaError

from engram.infra.settings import KafkaSettings
from engram.ingest.producer import EpisodeProducer
from engram.ingest.topics import ensure_topics
from engram.schemas.api import LogPosition
from engram.schemas.episodes import MemoryRemembered, TurnAppended
from engram.sealing.events import Sealer

log = structlog.get_logger(__name__)

Producible = TurnAppended | MemoryRemembered
"""What a producer may append; corrections are Engram's own and never come through here."""


class Intake:
    """Appends producers' episodes to ``engram.episodes``; one per API process."""

    def __init__(self, kafka: KafkaSettings, sealer: Sealer | None = None) -> None:
        self._kafka = kafka
        self._sealer = sealer
        self._producer: EpisodeProducer | None = None
        self._lock = asyncio.Lock()

    async def append(self, episodes: Sequence[Producible]) -> list[LogPosition]:
        """Append in request order (each project's keep their order); ``KafkaError`` when the
        log cannot be reached, with nothing appended unless the broker failed mid-batch."""
        producer = await self._started()
        try:
            return await producer.publish_many(episodes)
        except KafkaError:
            await self._drop()
            raise

    async def close(self) -> None:
        await self._drop()

    async def _started(self) -> EpisodeProducer:
        async with self._lock:
            if self._producer is None:
                producer = EpisodeProducer(self._kafka, self._sealer)
                try:
                    await ensure_topics(self._kafka)
                    await producer.__aenter__()
                except KafkaError:
                    await producer.__aexit__(None, None, None)
                    raise
                self._producer = producer
            return self._producer

    async def _drop(self) -> None:
        async with self._lock:
            producer, self._producer = self._producer, None
        if producer is not None:
            try:
                await producer.__aexit__(None, None, None)
            except KafkaError as error:  # already broken: nothing more to flush
                log.warning("intake.producer_stop_failed", error=type(error).__name__)
