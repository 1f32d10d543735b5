"""Every use Engram makes of faust's private API (and mode's), in one place.

:mod:`engram.streams.transport` delivers a record straight to its streams when faust's delivery
could not have waited, which means reading state faust keeps to itself: the conductor's index of
channels and its rebuild lock, the consumer's read offsets and ack count, the services' stop
events. :mod:`engram.streams.app` sends on the aiokafka producer faust holds. Formation's
aiokafka consumer reads committed records only, which faust sets only under ``exactly_once``:
:class:`ReadCommittedThread` sets it on the consumer faust builds, before it starts. None of it is
faust's promise, so an upgrade may move any of it: :data:`PRIVATE` names each attribute and why
it is used, and ``tests/unit/streams/test_faust_private.py`` checks every one on real faust
objects of the locked version, failing with the attribute's name when one is gone; it also
fails if any other module of the repository names one of them. Everything else uses the
functions here, named for what they give.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Collection, MutableMapping
from typing import Any, Final, cast

from faust.transport import consumer as faust_consumer
from faust.transport.drivers import aiokafka as faust_aiokafka
from faust.types import TP, AppT

from engram.infra.log_reading import READ_COMMITTED

# "Class._attribute": why Engram uses it. The class is where faust (or mode) keeps it.
PRIVATE: Final[dict[str, str]] = {
    "Conductor._tp_index": "the streams' channels of each partition: is one's buffer full?",
    "Conductor._tp_to_callback_lock": "held while the conductor rebuilds its deliveries",
    "Consumer._read_offset": "the drain loop's read offset of each partition",
    "Consumer._commit_every": "the drain loop commits every this many acks",
    "Consumer._n_acked": "acks since the drain loop last committed",
    "Consumer._add_gap": "records a gap in a partition's offsets, as the drain loop does",
    "Consumer._drain_messages": "the drain loop faust's fetcher runs: Engram's replaces it",
    "Consumer._thread": "the consumer's thread, whose loop an app never started must close",
    "Service._stopped": "the event a mode service sets when it stops",
    "Producer._ensure_producer": "the started aiokafka producer under faust's",
    "Consumer._new_consumer_thread": "builds the consumer's thread: Engram's reads committed",
    "ConsumerThread._create_worker_consumer": "builds the aiokafka consumer, not yet started",
}
"""Also aiokafka's ``AIOKafkaConsumer._isolation_level``, read when the consumer starts:
:class:`ReadCommittedThread` refuses to build a consumer without it, and the unit test of this
module checks the level of a consumer faust builds."""


def stream_channels(app: AppT) -> Callable[[TP, Collection[Any]], Collection[Any]]:
    """``channels(tp, ())``: the channels of the streams reading ``tp`` (without adding ``tp``
    to the conductor's index, which a plain lookup of its defaultdict would)."""
    return cast(
        Callable[[TP, Collection[Any]], Collection[Any]], cast(Any, app.topics)._tp_index.get
    )


def conductor_lock(app: AppT) -> asyncio.Lock:
    """The lock the conductor holds while it rebuilds its deliveries after a rebalance; its
    delivery of a record takes it too."""
    return cast(asyncio.Lock, cast(Any, app.topics)._tp_to_callback_lock)


def stopped(service: object) -> Callable[[], bool]:
    """Whether a mode service (faust's consumer, its fetcher) has been told to stop."""
    return cast(Callable[[], bool], cast(Any, service)._stopped.is_set)


def aiokafka_producer(producer: object) -> Any:
    """The started aiokafka producer under faust's (``await app.maybe_start_producer()``
    first)."""
    return cast(Any, producer)._ensure_producer()


def faust_drain_loop() -> Callable[..., Any]:
    """faust's own drain loop, which :mod:`engram.streams.transport` copies (its test compares
    this source's digest with the one the copy was made from)."""
    return cast(Callable[..., Any], faust_consumer.Consumer._drain_messages)


def close_unstarted(app: AppT) -> None:
    """Close the event loop faust's consumer thread makes on creation, for an app that was never
    started (tests build such apps; started ones close it themselves)."""
    cast(Any, app.consumer)._thread.thread_loop.close()


class ReadCommittedThread(faust_aiokafka.AIOKafkaConsumerThread):
    """faust's consumer thread, whose aiokafka consumer reads committed records only.

    faust reads ``read_committed`` only under ``processing_guarantee="exactly_once"``, which
    would also make its producer transactional; formation needs only the reading (why:
    :mod:`engram.infra.log_reading`). faust builds the consumer in one call with every setting,
    isolation among them, and aiokafka first uses the level when the consumer starts (building
    its fetcher), so the level is set on the built, not yet started, consumer."""

    def _create_worker_consumer(self, transport: faust_aiokafka.Transport) -> Any:
        consumer = super()._create_worker_consumer(transport)
        if not hasattr(consumer, "_isolation_level"):  # aiokafka renamed it: fail, never read all
            raise RuntimeError(
                "aiokafka's consumer has no _isolation_level: update "
                "engram.streams.faust_private.ReadCommittedThread"
            )
        consumer._isolation_level = READ_COMMITTED
        return consumer


def worker_consumer(consumer: object, transport: object) -> Any:
    """The aiokafka consumer ``consumer``'s thread builds (built, not started: stop it)."""
    return cast(Any, consumer)._thread._create_worker_consumer(transport)


class DrainingConsumer(faust_aiokafka.Consumer):
    """faust's aiokafka consumer, its drain loop and the state that loop keeps under public
    names: a subclass overrides :meth:`drain` (faust's fetcher calls ``_drain_messages``). Its
    thread's consumer reads committed records only (:class:`ReadCommittedThread`)."""

    def _new_consumer_thread(self) -> faust_aiokafka.AIOKafkaConsumerThread:
        return ReadCommittedThread(self, loop=self.loop, beacon=self.beacon)

    async def _drain_messages(self, fetcher: Any) -> None:  # pragma: no cover
        await self.drain(fetcher)

    async def drain(self, fetcher: Any) -> None:  # pragma: no cover
        """faust's own loop, until a subclass replaces it."""
        await super()._drain_messages(fetcher)

    @property
    def read_offsets(self) -> MutableMapping[TP, int | None]:
        """The offset last read of each partition (``None`` before the first)."""
        return self._read_offset

    @property
    def commit_every(self) -> int | None:
        return self._commit_every

    @property
    def acked_since_commit(self) -> int:
        return self._n_acked

    def restart_ack_count(self) -> None:
        self._n_acked = 0

    async def add_gap(self, tp: TP, offset_from: int, offset_to: int) -> None:
        await self._add_gap(tp, offset_from, offset_to)
