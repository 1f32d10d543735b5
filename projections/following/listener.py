"""Positioning a consumer at the offsets stored with a projection's rows, not the group's.

Every state-writing consumer of a topic here owns its offsets in PostgreSQL
(:mod:`engram.projections.following.tracking`), so a restart, a rebalance or a rewind resumes exactly
after what was written. Kafka's committed offsets, where written at all, are only a lag gauge.
"""

from __future__ import annotations

import contextlib
from collections.abc import Awaitable, Callable

import structlog
from aiokafka import AIOKafkaConsumer, ConsumerRebalanceListener, TopicPartition
from aiokafka.errors import IllegalStateError

from engram.infra.db import FIRST_DELAY_S, UNAVAILABLE, report_unavailable

log = structlog.get_logger(__name__)

OffsetsToSeek = Callable[[], Awaitable[dict[int, int]]]
"""Reads the offsets to seek to, by partition (a partition not named: its beginning)."""


async def seek_to_stored_offsets(
    consumer: AIOKafkaConsumer, partitions: set[TopicPartition], offsets_of: OffsetsToSeek
) -> None:
    """Position each assigned partition of ``partitions`` at the offset stored beside the rows
    (or the beginning): ``offsets_of`` reads them."""
    offsets = await offsets_of()
    for tp in partitions:
        # Asked again for each partition: a rebalance may revoke them while this awaits, and
        # the assignment after it is sought by the listener and the consume loop again.
        if tp not in consumer.assignment():
            continue
        if tp.partition in offsets:
            consumer.seek(tp, offsets[tp.partition])
            continue
        with contextlib.suppress(IllegalStateError):  # revoked during the await
            await consumer.seek_to_beginning(tp)


class SeekToStoredOffsets(ConsumerRebalanceListener):  # type: ignore[misc]
    """Seeks on assignment, and counts rebalances so the consume loop can tell stale records.

    aiokafka installs a new assignment, and may start fetching it from Kafka's committed
    offsets, *before* it awaits this listener. Records returned by a ``getmany`` that overlapped
    a rebalance can therefore come from a position the seek below then replaces: processing them
    would apply claims ahead of earlier ones whenever Kafka's offset is past the stored one (after
    the projection tables were dropped for a replay, for example). ``generation`` moves on every
    revocation and after every assignment, and the loop drops what it fetched across a move.
    """

    def __init__(
        self,
        consumer: AIOKafkaConsumer,
        offsets_of: OffsetsToSeek,
        *,
        name: str,
        on_revoked: Callable[[], None] = lambda: None,
    ):
        self._consumer = consumer
        self._offsets_of = offsets_of
        self._name = name
        self._on_revoked = on_revoked
        self.generation = 0
        self.positioned = False
        self.seek_pending = False

    async def on_partitions_revoked(self, revoked: set[TopicPartition]) -> None:
        self.generation += 1
        self._on_revoked()

    async def on_partitions_assigned(self, assigned: set[TopicPartition]) -> None:
        try:
            await seek_to_stored_offsets(self._consumer, assigned, self._offsets_of)
        except UNAVAILABLE as error:
            # aiokafka would log this and read on from Kafka's offsets: leave the seek to the
            # consume loop instead, which drops what it fetches until the seek has happened.
            report_unavailable(f"{self._name}.assign", error, FIRST_DELAY_S)
            self.seek_pending, self.positioned = True, False
        else:
            self.positioned = True
        finally:
            self.generation += 1
        log.info(
            "follower.assigned",
            follower=self._name,
            partitions=sorted(tp.partition for tp in assigned),
        )

    def moved_since(self, generation: int) -> bool:
        """Whether records fetched while ``generation`` was current may predate a seek."""
        return not self.positioned or self.generation != generation

    async def reseek(self) -> None:
        """Seek every assigned partition to its stored offset: after a write whose transaction
        failed, after a stale fetch, or after an assignment whose own seek failed."""
        await seek_to_stored_offsets(self._consumer, self._consumer.assignment(), self._offsets_of)
        if self.seek_pending:
            self.seek_pending, self.positioned = False, True
