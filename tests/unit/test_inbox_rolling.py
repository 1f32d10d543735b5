"""When the intake closes an inbox segment: the roll marker's rules, without a broker."""

from __future__ import annotations

from engram.ingest.inbox_rolling import ROLL_HEADER, SegmentRoller, is_roll_marker


def test_a_marker_has_no_value_and_the_header_and_words_are_never_a_marker() -> None:
    assert is_roll_marker(None, [(ROLL_HEADER, b"1")])
    assert is_roll_marker(b"", [("other", b"x"), (ROLL_HEADER, b"")])
    assert not is_roll_marker(None, [])
    assert not is_roll_marker(b'{"type": "turn.appended"}', [(ROLL_HEADER, b"1")])


def test_a_marker_is_due_once_the_oldest_moved_record_is_past_segment_ms() -> None:
    roller = SegmentRoller(10_000, margin_ms=1000)
    roller.moved(0, 5_000)
    roller.moved(0, 9_000)  # a later one does not move the oldest
    roller.moved(2, 7_000)
    assert roller.due(15_999) == []
    assert roller.due(16_000) == [0]
    assert roller.due(18_000) == [0, 2]


def test_a_marker_the_broker_timed_too_early_leaves_the_partition_due() -> None:
    roller = SegmentRoller(10_000, margin_ms=1000)
    roller.moved(1, 5_000)
    assert not roller.appended(1, 15_000)  # the broker's clock: not yet past segment.ms
    assert roller.due(16_000) == [1]
    assert roller.appended(1, 15_001)
    assert roller.due(99_000) == [] and roller.pending() == {}


def test_nothing_moved_means_nothing_to_roll() -> None:
    roller = SegmentRoller(10_000)
    assert roller.due(10**12) == []
    assert roller.appended(3, 0)  # a marker for nothing closes nothing that matters
