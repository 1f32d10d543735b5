"""faust's Kafka transport with a cheaper hand-over of each record to the streams.

faust's consumer hands every fetched record to the conductor (which decodes it and puts the
event on each subscribed stream's queue) through ``wait_first(deliver, suspend_flow.wait())``:
two new tasks and an ``asyncio.wait`` per record, so that a delivery stuck on a full stream
buffer is abandoned when a rebalance suspends the flow — while the delivery almost never waits.
Measured here: the call alone 35-50 µs of CPU a record, and with the loop turns its tasks cost,
about half of faust's whole per-record path (faust's floor in bench/throughput.py fell from
230-380 to 85-135 µs a record without it; docs/benchmarks.md).

:class:`EngramConsumer` keeps faust's drain loop (faust-streaming 0.15.3's
``Consumer._drain_messages``, copied; ``tests/unit/streams/test_transport.py`` fails if faust's
loop changes) with one change: when the delivery cannot wait — flow not suspended, the
producer's buffer not over its limit, no subscribed stream's buffer full — it is awaited
directly. Otherwise faust's race with ``suspend_flow`` runs as before. The conductor's delivery
suspends only on those conditions or on the lock it holds while rebuilding its deliveries after
a rebalance, which is checked too (``faust/transport/conductor.py``), so the direct await
finishes within the same turn of the loop, as the raced one would have; ordering, offsets and
acknowledgements are untouched (the loop still tracks the read offset after each delivery).
What this reads of faust's private state, it reads through :mod:`engram.streams.faust_private`.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any, cast

import faust
from faust.transport import consumer as faust_consumer
from faust.transport.drivers import aiokafka as faust_aiokafka
from faust.types import TP

from engram.streams.faust_private import (
    DrainingConsumer,
    conductor_lock,
    stopped,
    stream_channels,
)


class EngramConsumer(DrainingConsumer):
    """faust's aiokafka consumer; records that can be delivered at once are, without tasks."""

    def _delivers_at_once(self) -> Callable[[TP], bool]:
        """A check, bound once per drain loop: can a record of ``tp`` be delivered now
        without waiting (so without racing ``suspend_flow``)?"""
        app = self.app
        suspended = self.suspend_flow.is_set
        flow_active = app.flow_control.is_active
        buffer = app.producer.buffer
        # The conductor's own index of the streams' channels per partition, and the lock it
        # holds while it rebuilds its deliveries (private in faust; its delivery takes the
        # lock, then delivers to the channels of this same mapping).
        channels_of = stream_channels(app)
        rebuilding = conductor_lock(app).locked

        def at_once(tp: TP) -> bool:
            if suspended() or not flow_active() or rebuilding():
                return False
            if buffer.size > buffer.max_messages:
                return False
            return not any(channel.queue.full() for channel in channels_of(tp, ()))

        return at_once

    def _delivery(self) -> Callable[[TP, Any], Awaitable[None]]:
        """The body of faust's drain loop for one record, as a closure over its locals:
        skip what was read already, record a gap, commit every ``commit_every`` acks, deliver,
        then advance the read offset."""
        callback = self.callback
        get_read_offset = self.read_offsets.__getitem__
        set_read_offset = self.read_offsets.__setitem__
        commit_every = self.commit_every
        acks_enabled_for = self.app.topics.acks_enabled_for
        at_once = self._delivers_at_once()

        async def deliver(tp: TP, message: Any) -> None:
            offset = message.offset
            r_offset = get_read_offset(tp)
            if r_offset is None or offset >= r_offset:
                gap = offset - (r_offset or 0)
                # We have a gap in income messages
                if gap > 1 and r_offset and acks_enabled_for(message.topic):
                    await self.add_gap(tp, r_offset + 1, offset)
                if commit_every is not None and self.acked_since_commit >= commit_every:
                    self.restart_ack_count()
                    await self.commit()
                # Engram: deliver directly when the delivery cannot wait.
                if at_once(tp):
                    await callback(message)
                else:
                    await self.wait_first(callback(message), self.suspend_flow.wait())
                set_read_offset(tp, offset)
            else:
                self.log.dev(
                    "DROPPED MESSAGE ROFF %r: k=%r v=%r", offset, message.key, message.value
                )

        return deliver

    async def drain(self, fetcher: Any) -> None:  # pragma: no cover
        """faust-streaming 0.15.3's loop, its per-record body in :meth:`_delivery`."""
        getmany = self.getmany
        consumer_should_stop = stopped(self)
        fetcher_should_stop = stopped(fetcher)
        flag_consumer_fetching = faust_consumer.CONSUMER_FETCHING
        set_flag = self.diag.set_flag
        unset_flag = self.diag.unset_flag
        deliver = self._delivery()

        yield_every = 100
        num_since_yield = 0
        sleep = asyncio.sleep

        try:
            while not (consumer_should_stop() or fetcher_should_stop()):
                set_flag(flag_consumer_fetching)
                ait = cast(AsyncIterator[Any], getmany(timeout=1.0))

                # Sleeping because sometimes getmany is called in a loop
                # never releasing to the event loop
                await self.sleep(0)
                if not self.should_stop:
                    async for tp, message in ait:
                        num_since_yield += 1
                        if num_since_yield > yield_every:
                            await sleep(0)
                            num_since_yield = 0
                        await deliver(tp, message)
                    unset_flag(flag_consumer_fetching)

        except self.consumer_stopped_errors:
            if self.transport.app.should_stop:
                # we're already stopping so ignore
                self.log.info("Broker stopped consumer, shutting down...")
                return
            raise
        except asyncio.CancelledError:
            if self.transport.app.should_stop:
                # we're already stopping so ignore
                self.log.info("Consumer shutting down for user cancel.")
                return
            raise
        except Exception as exc:
            self.log.exception("Drain messages raised: %r", exc)
            raise
        finally:
            unset_flag(flag_consumer_fetching)


class EngramTransport(faust_aiokafka.Transport):
    Consumer = EngramConsumer


class EngramApp(faust.App):
    """A faust app on :class:`EngramTransport` (the broker URL must be ``kafka://``)."""

    def _new_transport(self) -> Any:
        return EngramTransport(self.conf.broker_consumer, self)
