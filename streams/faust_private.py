"""Every use Engram makes of faust's private API (and mode's), in one place.

:mod:`engram.streams.transport` delivers a record straight to its streams when faust's delivery
could not have waited, which means reading state faust keeps to itself: the conductor's index of
channels and its rebuild lock, the consumer's read offsets and ack count, the services' stop
events. :mod:`engram.streams.app` sends on the aiokafka producer faust holds. None of it is
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
}


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


class DrainingConsumer(faust_aiokafka.Consumer):
    """faust's aiokafka consumer, its drain loop and the state that loop keeps under public
    names: a subclass overrides :meth:`drain` (faust's fetcher calls ``_drain_messages``)."""

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
