"""Closing the inbox's segments, so moved plaintext leaves the broker's disk within a bound.

The intake deletes what it moved (``DeleteRecords``), which moves the partition's log start
offset; the broker then deletes every *closed* segment below it at its next retention check.
The segment a record was written to stays open — and its file holds the record's words — until
the next append after ``segment.ms`` rolls it: on a quiet inbox, that may be never. So once a
partition's moved records are older than ``segment.ms``, the intake appends a **roll marker**
there: a record with an empty value and the header ``engram.inbox.roll``, which closes the segment
(the broker rolls on an append when the segment's first record is older than ``segment.ms``)
and which the intake then moves past like any record, appending nothing.

What a marker does is checked against the broker's own clock: the topic's timestamps are
``LogAppendTime`` (``engram.ingest.topics.inbox_config``), and the marker's acknowledged timestamp must
be more than ``segment.ms`` past the oldest moved record's, or another marker follows.
:class:`SegmentRoller` decides when; it does no I/O.
"""

from __future__ import annotations

from collections.abc import Sequence

ROLL_HEADER = "engram.inbox.roll"
ROLL_MARGIN_MS = 1000
"""Past ``segment.ms``, so a marker is not sent a moment too early for the broker's clock."""


def is_roll_marker(value: bytes | None, headers: Sequence[tuple[str, bytes]]) -> bool:
    """A record the intake appended to close a segment: an empty value, and the marker header.
    A record with words in it is never one, whatever its headers say."""
    return not value and any(name == ROLL_HEADER for name, _ in headers)


class SegmentRoller:
    """Which inbox partitions hold moved records in a segment that may still be open."""

    def __init__(self, segment_ms: int, *, margin_ms: int = ROLL_MARGIN_MS) -> None:
        self._segment_ms = segment_ms
        self._margin_ms = margin_ms
        self._oldest: dict[int, int] = {}
        """Partition → the broker timestamp of its oldest moved record not yet rolled past."""

    def moved(self, partition: int, timestamp_ms: int) -> None:
        """A record of ``partition`` was moved (committed and deleted from the inbox)."""
        oldest = self._oldest.get(partition)
        if oldest is None or timestamp_ms < oldest:
            self._oldest[partition] = timestamp_ms

    def due(self, now_ms: int) -> list[int]:
        """Partitions whose marker is due: their oldest moved record is past ``segment.ms``."""
        limit = self._segment_ms + self._margin_ms
        return sorted(p for p, oldest in self._oldest.items() if now_ms - oldest >= limit)

    def appended(self, partition: int, marker_ms: int) -> bool:
        """A marker was appended to ``partition`` at ``marker_ms`` (the broker's time): True
        when it closed the segment holding the moved records, False when it came too early
        (the broker's clock behind this one's) and another is due."""
        oldest = self._oldest.get(partition)
        if oldest is None or marker_ms - oldest > self._segment_ms:
            self._oldest.pop(partition, None)
            return True
        return False

    def pending(self) -> dict[int, int]:
        return dict(self._oldest)
