"""Following a topic into PostgreSQL: one log follower, and the sinks it hands records to.

Every state-writing consumer of a topic here is a sink behind one :class:`LogFollower`: the
belief projector (``engram.claims``), the message index and the message vectors
(``engram.episodes``, both behind one follower in ``engram worker``) and the notifier's
deliveries owed (``engram.memory-events``). The follower subscribes,
seeks each partition to the offsets stored with the projection (:class:`Tracking`, written in
the sink's transaction: exactly once), fetches, decodes and opens each record once, hands each
sink the records it has not stored, waits out outages (a resting sink does not stop the
others) and reports readiness and lag (``engram_follower_lag``). The anchors are
eventsourcing's ``Follower`` (a tracking record in the projection's transaction) and Quix
Streams' ``BatchingSink`` (one place a batch is written and its offsets committed).

How to write a sink (:mod:`engram.projections.notifying` is a small one):

1. A decoder for the topic, ``async (TopicPartition, [ConsumerRecord]) -> [T]``, where ``T``
   has an ``offset``: it decodes (and opens) each record once for every sink of the follower;
   it may leave a record out (a bad one, after saying so). Decode from bytes with pydantic.
2. A :class:`BatchSink` subclass with a name, a :class:`Tracking` (its projector name in
   ``projector_offset``), and two methods: ``prepare(batch)``, anything done with no
   connection held (a model or HTTP call; return ``None`` when there is nothing), and
   ``write(conn, batch, prepared)``, the statements — inside the follower's transaction,
   given only the records its stored offset does not cover yet (a rival that wrote them first
   is waited for on the tracking row). Don't commit, don't store the offset: the follower does
   both, after ``write``. Give the rows a key by identity all the same (``ON CONFLICT``): the
   database's constraints are the backstop, whatever path writes.
3. ``waits_out``: the errors besides PostgreSQL being unreachable after which the sink should
   rest and get the same records again (an HTTP endpoint that is down); anything else ends
   the follower, which is what a bug should do.
4. Run it: ``LogFollower(settings.kafka, topic=..., decode=..., sinks=[sink]).run()`` as a task
   or as a stage (:func:`infra.health.run_stage_alone`: ``stop``, ``readiness``); the consumer
   group is ``<group>-<sink names joined by +>``.

The follower's contract with every sink is :class:`Sink`: a name, a :class:`Tracking`,
``take``, and optionally ``start``, ``idle``, ``stop``, ``waits_out`` and ``report``. A sink with
its own schedule (the belief projector's lanes commit chunks out of offset order) is a
:class:`ScheduledSink`: ``take`` queues, and it implements the :class:`Schedule` the follower
keeps around the queue (``room``, ``settle``, ``hold``, ``finish``, ``abandon``); see
:mod:`engram.projections.beliefs.applying`.
"""

from engram.projections.following.follower import Decode, LogFollower
from engram.projections.following.listener import SeekToStoredOffsets
from engram.projections.following.sink import (
    Batch,
    BatchSink,
    Positions,
    Schedule,
    ScheduledSink,
    Sink,
    write_tracked,
)
from engram.projections.following.tracking import Tracking

__all__ = [
    "Batch",
    "BatchSink",
    "Decode",
    "LogFollower",
    "Positions",
    "Schedule",
    "ScheduledSink",
    "SeekToStoredOffsets",
    "Sink",
    "Tracking",
    "write_tracked",
]
