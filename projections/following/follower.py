"""The log follower: subscribe, seek to the stored offsets, fetch, decode once, hand each sink
its records, wait out outages, report readiness and lag — once, for every sink of a topic.

One :class:`LogFollower` owns one consumer of one topic. Each fetch's records are decoded (and,
on a sealed log, opened) once, then handed to every sink that has not stored them yet, the
sinks of one partition side by side; a sink that fails with an error it waits out rests
(capped exponential back-off, :data:`infra.db.DATABASE_BACKOFF`) while the others go on, and is
then handed the same records again from its stored offset.

Where the consumer reads: each sink's stored offsets are read on every assignment and every
seek, and each partition is positioned at the lowest of them among the sinks that are not
resting; a record below a sink's own offset is not handed to it, and not decoded at all when
no sink wants it. Records fetched across a rebalance are dropped and read again from there
(:class:`engram.projections.following.listener.SeekToStoredOffsets`). Kafka's committed offsets are
written after each fetch, as a lag gauge only.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from functools import partial
from typing import Generic

import structlog
from aiokafka import AIOKafkaConsumer, ConsumerRecord, TopicPartition
from aiokafka.errors import IllegalStateError, KafkaError
from prometheus_client import Gauge

from engram.infra.backoff import pause_unless
from engram.infra.db import DATABASE_BACKOFF, UNAVAILABLE, retry_while_unavailable
from engram.infra.log_reading import log_consumer
from engram.infra.metrics import FOLLOWER_LAG, FOLLOWER_RECORDS
from engram.infra.settings import KafkaSettings
from engram.projections.following.listener import SeekToStoredOffsets
from engram.projections.following.sink import Batch, Schedule, Sink, T, lowest, schedule_of

log = structlog.get_logger(__name__)

Decode = Callable[[TopicPartition, list[ConsumerRecord]], Awaitable[list[T]]]
"""Turns one partition's fetched records into what the sinks take, in offset order; it may
leave a record out (the belief projector dead-letters an undecodable one first)."""


@dataclass(eq=False)
class _Follows(Generic[T]):
    """A sink, and how far the follower has handed it records."""

    sink: Sink[T]
    schedule: Schedule
    """The sink's own, if it writes on one (:class:`ScheduledSink`); else one that waits for
    nothing."""
    next: dict[int, int] = field(default_factory=dict)
    """By partition, the first offset not yet handed to the sink (its stored offset at the
    last seek, then past each batch it took)."""
    failures: int = 0
    """Consecutive failures it waited out: the rest doubles while they last."""
    resting_until: float | None = None
    why: str = ""


class LogFollower(Generic[T]):
    """Follows one topic for its sinks until stopped."""

    def __init__(
        self,
        settings: KafkaSettings,
        *,
        topic: str,
        decode: Decode[T],
        sinks: Sequence[Sink[T]],
        max_records: int = 500,
    ) -> None:
        """``sinks`` name the consumer group (``<group>-<name>+<name>``): one process that runs
        the same sinks shares the partitions of the same group."""
        if not sinks:
            raise ValueError("a log follower needs at least one sink")
        names = [sink.name for sink in sinks]
        if len(set(names)) != len(names):
            raise ValueError(f"two sinks of one follower share a name: {names}")
        self._settings = settings
        self.topic = topic
        self.name = "+".join(names)
        self._decode = decode
        self._follows = [_Follows(sink, schedule_of(sink)) for sink in sinks]
        self._max_records = max_records
        self._stopping = asyncio.Event()
        self._listener: SeekToStoredOffsets | None = None
        self._consumer: AIOKafkaConsumer | None = None
        self._reseek = False
        self._resting = 0
        """How many sinks rest now."""
        self._positioned_at = -1
        """The listener's generation when the sinks were last settled and sought: a rebalance
        since (even one between two fetches: the sinks were held) means settling and seeking
        again before the next fetch."""
        self.fetched = 0
        """Records fetched and decoded by this run."""
        self._counted = FOLLOWER_RECORDS.labels(self.name)
        self._lag_gauges: dict[tuple[str, int], Gauge] = {}

    @property
    def group(self) -> str:
        return f"{self._settings.group_id}-{self.name}"

    @property
    def sinks(self) -> list[Sink[T]]:
        return [follows.sink for follows in self._follows]

    def held(self) -> list[int]:
        """The partitions this follower holds now."""
        if self._consumer is None:
            return []
        return sorted(tp.partition for tp in self._consumer.assignment())

    def stop(self) -> None:
        self._stopping.set()
        for follows in self._follows:
            follows.sink.stop()

    def readiness(self) -> tuple[bool, str]:
        """Ready once positioned at the stored offsets and no sink is resting."""
        if self._listener is None or not self._listener.positioned:
            return False, "partitions not yet assigned and positioned at the stored offsets"
        resting = [f.why for f in self._follows if f.resting_until is not None]
        if resting:
            return False, "; ".join(resting)
        return True, "ready"

    async def run(self) -> None:
        for follows in self._follows:
            await retry_while_unavailable(follows.sink.start, what=f"{follows.sink.name}.start")
        consumer = self._consumer = log_consumer(
            bootstrap=self._settings.bootstrap,
            group_id=self.group,
            auto_offset_reset="earliest",
            session_timeout_ms=self._settings.session_timeout_ms,
            heartbeat_interval_ms=max(self._settings.session_timeout_ms // 3, 500),
        )
        listener = self._listener = SeekToStoredOffsets(
            consumer, self._offsets_to_seek, name=self.name, on_revoked=self._hold
        )
        consumer.subscribe([self.topic], listener=listener)
        await consumer.start()
        try:
            while not self._stopping.is_set():
                if await self._step(consumer, listener) and not self._stopping.is_set():
                    await self._commit_lag_gauge(consumer)
            for follows in self._follows:
                await self._finish(follows)
        except BaseException:
            # Cancelled, or failed: what did not commit is read again after the next seek.
            for follows in self._follows:
                follows.schedule.abandon()
            raise
        finally:
            self._consumer = None
            await consumer.stop()

    async def _step(self, consumer: AIOKafkaConsumer, listener: SeekToStoredOffsets) -> bool:
        """Fetch once and hand every partition's records on; whether anything was fetched."""
        active = self._wake_rested()
        if not active:
            await self._pause(self._until_a_sink_wakes())
            return False
        moved = listener.generation != self._positioned_at
        if (moved or self._reseek or listener.seek_pending) and not await self._reposition(
            listener
        ):
            return False
        for follows in active:
            await self._guarded(follows, follows.schedule.room)
        generation = listener.generation
        if self._stopping.is_set() or not self._active() or generation != self._positioned_at:
            return False  # a rebalance since the seek: settle and seek again first
        fetched = await consumer.getmany(timeout_ms=200, max_records=self._max_records)
        if listener.moved_since(generation):
            # Fetched across a rebalance, possibly from before its seek: drop it and read
            # again from the stored offsets, the truth.
            await self._reposition(listener)
            return False
        if self._stopping.is_set():
            return bool(fetched)
        for tp, records in fetched.items():
            await self._hand_on(tp, records)
        await self._gauge_lag(consumer)
        if fetched:
            return True
        for follows in self._active():
            await self._guarded(
                follows,
                partial(follows.sink.idle, _View(consumer, self.topic, listener, generation)),
            )
        return False

    async def _hand_on(self, tp: TopicPartition, records: list[ConsumerRecord]) -> None:
        """Decode what some sink still wants of one partition's fetch, once, and hand each sink
        its part, side by side."""
        taking = [f for f in self._active() if records[-1].offset >= f.next.get(tp.partition, 0)]
        if not taking:
            return
        first = min(f.next.get(tp.partition, 0) for f in taking)
        wanted = [r for r in records if r.offset >= first]
        decoded = await self._decode(tp, wanted)
        self.fetched += len(wanted)
        self._counted.inc(len(wanted))
        whole = Batch(tp.topic, tp.partition, decoded, records[-1].offset + 1)
        if len(taking) == 1:
            await self._take(taking[0], whole.since(taking[0].next.get(tp.partition, 0)))
            return
        results = await asyncio.gather(
            *(self._take(f, whole.since(f.next.get(tp.partition, 0))) for f in taking),
            return_exceptions=True,
        )
        for result in results:
            if isinstance(result, BaseException):
                raise result

    async def _take(self, follows: _Follows[T], batch: Batch[T]) -> None:
        if await self._guarded(follows, partial(follows.sink.take, batch)):
            follows.next[batch.partition] = batch.next_offset
            follows.failures = 0

    async def _guarded(
        self, follows: _Follows[T], operation: Callable[[], Awaitable[None]]
    ) -> bool:
        """Run one of a sink's operations; an error it waits out rests it (False)."""
        try:
            await operation()
        except Exception as error:
            if not follows.sink.waits_for(error):
                raise
            await self._rest(follows, error)
            return False
        return True

    async def _rest(self, follows: _Follows[T], error: BaseException) -> None:
        """Rest a sink that failed: settle what it has in flight (the same outage, most
        likely), and hand it nothing until the back-off has passed and the consumer has been
        sought back to its stored offsets."""
        sink = follows.sink
        sink.outages += 1
        follows.failures += 1
        delay = DATABASE_BACKOFF.after(follows.failures)
        sink.report(error, delay)
        if follows.resting_until is None:
            self._resting += 1
        follows.resting_until = time.monotonic() + delay
        follows.why = (
            "PostgreSQL is unreachable; retrying"
            if isinstance(error, UNAVAILABLE)
            else f"{sink.name}: {type(error).__name__}; retrying"
        )
        with contextlib.suppress(*UNAVAILABLE, *sink.waits_out):
            await follows.schedule.settle()

    def _wake_rested(self) -> list[_Follows[T]]:
        """Wake the sinks whose rest is over; the sinks not resting."""
        if self._resting:
            now = time.monotonic()
            for follows in self._follows:
                if follows.resting_until is not None and follows.resting_until <= now:
                    follows.resting_until, follows.why = None, ""
                    self._resting -= 1
                    self._reseek = True  # handed records again from its stored offsets
        return self._active()

    def _active(self) -> list[_Follows[T]]:
        if not self._resting:
            return self._follows
        return [f for f in self._follows if f.resting_until is None]

    def _until_a_sink_wakes(self) -> float:
        wakes = [f.resting_until for f in self._follows if f.resting_until is not None]
        return max(min(wakes) - time.monotonic(), 0.0) if wakes else 0.0

    async def _reposition(self, listener: SeekToStoredOffsets) -> bool:
        """Settle every sink, then seek to the stored offsets; False when the database could
        not say where they are (every sink rests, and the seek is tried again after)."""
        for follows in self._active():
            await self._guarded(follows, follows.schedule.settle)
        generation = listener.generation
        try:
            await listener.reseek()
        except UNAVAILABLE as error:
            for follows in self._active():
                await self._rest(follows, error)
            return False
        self._reseek, self._positioned_at = False, generation
        return True

    async def _offsets_to_seek(self) -> dict[int, int]:
        """Every sink's stored offsets, remembered; the lowest among those not resting."""
        for follows in self._follows:
            follows.next = await follows.sink.stored_offsets(self.topic)
        return lowest([f.next for f in self._active()] or [f.next for f in self._follows])

    def _hold(self) -> None:
        for follows in self._follows:
            follows.schedule.hold()

    async def _finish(self, follows: _Follows[T]) -> None:
        try:
            await follows.schedule.finish()
        except Exception as error:
            if not follows.sink.waits_for(error):
                raise
            follows.sink.outages += 1
            follows.sink.report(error, 0)  # read again after the next start's seek

    async def _pause(self, seconds: float) -> None:
        """Wait, but no longer than until the follower is asked to stop."""
        await pause_unless(self._stopping, seconds)

    async def _gauge_lag(self, consumer: AIOKafkaConsumer) -> None:
        """Each sink's lag in each partition held, after every fetch.

        The end of a partition is not always a record: a transactional producer's commit or
        abort marker takes an offset, and so do the records of an aborted transaction, which a
        read-committed consumer skips. A sink that is following (not resting) has been handed
        everything before the consumer's position, so its lag is counted from the later of its
        next offset and that position — else a log ending in a marker reads 1 behind for ever.
        A resting sink's lag counts from its own next offset: it has not been handed what the
        consumer read past."""
        following = {id(f) for f in self._active()}
        for tp in consumer.assignment():
            highwater = consumer.highwater(tp)
            if highwater is None:
                continue
            position = await consumer.position(tp)
            for follows in self._follows:
                key = (follows.sink.name, tp.partition)
                gauge = self._lag_gauges.get(key)
                if gauge is None:
                    gauge = self._lag_gauges[key] = FOLLOWER_LAG.labels(key[0], str(key[1]))
                read = follows.next.get(tp.partition, 0)
                if id(follows) in following:
                    read = max(read, position)
                gauge.set(max(highwater - read, 0))

    async def _commit_lag_gauge(self, consumer: AIOKafkaConsumer) -> None:
        """Commit positions to Kafka so lag tools see progress; a failure (a rebalance in
        progress, say) loses nothing, because the stored offsets decide where reading resumes."""
        try:
            await consumer.commit()
        except KafkaError as error:
            log.info(
                "follower.kafka_commit_skipped", follower=self.name, error=type(error).__name__
            )


@dataclass(frozen=True)
class _View:
    """What a sink may ask when a fetch came back empty (:class:`sink.Positions`)."""

    consumer: AIOKafkaConsumer
    topic: str
    listener: SeekToStoredOffsets
    generation: int
    """The listener's generation at the empty fetch: a position read after a rebalance may
    be Kafka's committed offset rather than the stored one, so none is given then."""

    async def positions(self) -> dict[int, int]:
        held = {}
        for tp in self.consumer.assignment():
            with contextlib.suppress(IllegalStateError):  # revoked while this awaited
                held[tp.partition] = await self.consumer.position(tp)
        return {} if self.listener.moved_since(self.generation) else held

    async def end_offsets(self) -> dict[int, int]:
        partitions = self.consumer.partitions_for_topic(self.topic) or set()
        ends = await self.consumer.end_offsets([TopicPartition(self.topic, p) for p in partitions])
        return {tp.partition: end for tp, end in ends.items()}
