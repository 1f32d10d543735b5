"""A record is handed to the streams directly only when faust's delivery could not have waited;
otherwise faust's own race with a suspended flow runs. Real faust objects, never started (no
broker is contacted)."""

from __future__ import annotations

import hashlib
import inspect
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any, cast

import faust
import pytest
from faust.transport.conductor import Conductor, ConductorCompiler
from faust.types import TP

from engram.streams.faust_private import close_unstarted, conductor_lock, faust_drain_loop
from engram.streams.transport import EngramApp, EngramConsumer

TOPIC = "unit.episodes"
TP0 = TP(TOPIC, 0)

FAUST_DRAIN_LOOP_SHA256 = "44a2500309e83c630493f6828af50166ec8d96a0b3e4fb2bab735f704ae93417"
FAUST_DELIVERY_SHA256 = "837cf521368c1ee4b22c235a2b137f665eca03d0e3e01b5ddedb65232ee73bf2"
FAUST_HANDLER_SHA256 = "9fbc0538097aa4eca6113b99df8d17605ae72a6b5030482f041a183f4cc34df1"


@pytest.fixture
async def assigned(tmp_path: Path) -> AsyncIterator[tuple[faust.App, faust.TopicT]]:
    """An app with one topic whose partition 0 is assigned; never started."""
    app = EngramApp(
        "unit-transport",
        broker="kafka://127.0.0.1:1",
        value_serializer="raw",
        stream_buffer_maxsize=2,
        web_enabled=False,
        datadir=str(tmp_path),
    )
    topic = app.topic(TOPIC, value_type=bytes, value_serializer="raw")
    app.topics.add(topic)
    await app.topics.on_partitions_assigned({TP0})
    app.flow_control.resume()  # as faust does once partitions are assigned
    yield app, topic
    close_unstarted(app)


def at_once(app: faust.App) -> Callable[[TP], bool]:
    consumer = app.consumer
    assert isinstance(consumer, EngramConsumer)
    return consumer._delivers_at_once()


async def test_a_record_is_delivered_directly_while_the_flow_runs_and_its_stream_has_room(
    assigned: tuple[faust.App, faust.TopicT],
) -> None:
    app, topic = assigned
    check = at_once(app)
    assert check(TP0)
    topic.queue.put_nowait(b"first")
    assert check(TP0)
    topic.queue.put_nowait(b"second")  # the stream's buffer (2) is full: the put would wait
    assert not check(TP0)


async def test_a_suspended_flow_hands_delivery_back_to_fausts_race(
    assigned: tuple[faust.App, faust.TopicT],
) -> None:
    app, _ = assigned
    check = at_once(app)
    app.flow_control.suspend()  # a rebalance
    assert not check(TP0)
    app.flow_control.resume()
    cast(Any, app.consumer).suspend_flow.set()
    assert not check(TP0)


async def test_a_conductor_rebuilding_its_deliveries_hands_delivery_back_to_fausts_race(
    assigned: tuple[faust.App, faust.TopicT],
) -> None:
    app, _ = assigned
    check = at_once(app)
    async with conductor_lock(app):  # as the conductor holds it while it rebuilds after a rebalance
        assert not check(TP0)
    assert check(TP0)


async def test_a_full_producer_buffer_hands_delivery_back_to_fausts_race(
    assigned: tuple[faust.App, faust.TopicT],
) -> None:
    app, _ = assigned
    check = at_once(app)
    buffer = app.producer.buffer
    buffer.max_messages = -1  # any size is over the limit: the delivery would wait to flush
    assert not check(TP0)


def test_the_copied_drain_loop_and_the_delivery_it_relies_on_are_fausts_own() -> None:
    """streams/transport.py copies faust's drain loop, and its direct delivery is safe only
    while the conductor's delivery waits on nothing but flow control, its own lock, the
    producer's buffer and a full stream buffer. After a faust upgrade, compare these with the
    new faust, carry over its changes, then record the new digests here."""

    def digest(function: object) -> str:
        return hashlib.sha256(inspect.getsource(function).encode()).hexdigest()  # type: ignore[arg-type]

    assert digest(faust_drain_loop()) == FAUST_DRAIN_LOOP_SHA256
    assert digest(ConductorCompiler.build) == FAUST_DELIVERY_SHA256
    assert digest(Conductor._compile_message_handler) == FAUST_HANDLER_SHA256
