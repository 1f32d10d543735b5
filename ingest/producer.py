"""Publishing episodes: validated at the door, keyed by tenant/project, idempotent on the wire.

The producer uses Kafka's idempotence (``enable_idempotence``, ``acks=all``), so a retried send
never appends a turn twice; the event id stays the episode's identity downstream.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from types import TracebackType

import orjson
from aiokafka import AIOKafkaProducer

from engram.infra.errors import EngramFailure
from engram.infra.settings import KafkaSettings
from engram.schemas.api import LogPosition
from engram.schemas.common import episode_key
from engram.schemas.log import LogEvent, OpenEvent
from engram.sealing.events import NoKeys, Sealer

Episode = OpenEvent
"""Anything on the episodic log; producers' doors (JSON lines, HTTP) accept only turns and
explicit memories, Engram's correction service appends the rest."""


class EpisodeTooLarge(EngramFailure, ValueError):
    """One episode encodes to more than ``ENGRAM_KAFKA_MAX_EVENT_BYTES``."""

    code = "episode_too_large"

    def __init__(self, index: int, size: int, limit: int) -> None:
        super().__init__(
            f"episode {index} of the request is {size} bytes, over the limit of {limit} "
            "(ENGRAM_KAFKA_MAX_EVENT_BYTES); nothing was appended"
        )
        self.index = index
        self.size = size
        self.limit = limit


class EpisodeUnencodable(EngramFailure, ValueError):
    """Valid by the contract's models but not as JSON on the log (an integer over 64 bits)."""

    code = "episode_unencodable"

    def __init__(self, index: int, error: Exception) -> None:
        super().__init__(f"episode {index} of the request cannot be appended: {error}")
        self.index = index
        self.problem = str(error)


def encode_episode(episode: LogEvent) -> bytes:
    return orjson.dumps(episode.model_dump(mode="json"))


def encoded(episodes: Sequence[LogEvent], limit: int) -> list[bytes]:
    """Each episode's bytes on the log, or the refusal of all of them: one that cannot be
    encoded, or that is over the limit the worker would dead-letter at."""
    payloads = []
    for index, episode in enumerate(episodes):
        try:
            payload = encode_episode(episode)
        except TypeError as error:  # orjson: integers beyond 64 bits
            raise EpisodeUnencodable(index, error) from None
        if len(payload) > limit:
            raise EpisodeTooLarge(index, len(payload), limit)
        payloads.append(payload)
    return payloads


class EpisodeProducer:
    """An idempotent producer of episodes; use as an async context manager."""

    def __init__(self, settings: KafkaSettings, sealer: Sealer | None = None):
        self._sealer: Sealer = sealer or NoKeys()
        self._topic = settings.episodes_topic
        self._max_bytes = settings.max_event_bytes
        self._producer = AIOKafkaProducer(
            bootstrap_servers=settings.bootstrap,
            enable_idempotence=True,
            acks="all",
            linger_ms=5,
            max_request_size=max(settings.max_event_bytes * 2, 1_048_576),
        )

    async def __aenter__(self) -> EpisodeProducer:
        await self._producer.start()
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self._producer.stop()

    async def publish(self, episode: Episode) -> LogPosition:
        """Append one episode, measured first like every other (:meth:`publish_many`)."""
        [appended] = await self.publish_many([episode])
        return appended

    async def publish_raw(self, key: bytes, value: bytes) -> tuple[int, int]:
        """Append bytes as they are: for tests and tools that must write what validation refuses.
        Bytes name no event, so this is only the partition and offset they landed at."""
        metadata = await self._producer.send_and_wait(self._topic, value, key=key)
        return metadata.partition, metadata.offset

    async def publish_many(
        self, episodes: Iterable[Episode], on_appended: Callable[[], None] | None = None
    ) -> list[LogPosition]:
        """Publish in order; batches on the wire while keeping each key's order.

        Every episode is encoded and measured before the first is sent (:func:`encoded`), so
        one that the worker would dead-letter refuses the whole call and nothing is appended:
        this is the one writer behind every door (HTTP, ``engram ingest``, MCP, corrections).
        ``on_appended`` is called once per episode the broker has acknowledged (progress).
        With log encryption on, each is sealed first and measured sealed: the limit is what
        the worker reads, and ciphertext is about a third larger than the words it hides."""
        episodes = list(episodes)
        sealed = await self._sealer.seal_all(episodes)
        payloads = encoded(sealed, self._max_bytes)
        futures = []
        for episode, payload in zip(episodes, payloads, strict=True):
            key = episode_key(episode.tenant, episode.project)
            futures.append((episode, await self._producer.send(self._topic, payload, key=key)))
        results = []
        for episode, future in futures:
            metadata = await future
            if on_appended is not None:
                on_appended()
            results.append(
                LogPosition(
                    event_id=episode.event_id,
                    tenant=episode.tenant,
                    project=episode.project,
                    partition=metadata.partition,
                    offset=metadata.offset,
                )
            )
        return results
