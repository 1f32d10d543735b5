"""The lanes' books (projections.lanes): a principal's records on one lane in offset order, one
chunk per lane at a time, and a stored offset that never passes an unsettled record."""

from __future__ import annotations

from dataclasses import dataclass

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from projections.lanes import PartitionLanes


@dataclass(frozen=True)
class Rec:
    offset: int
    who: str

    @property
    def lane_key(self) -> bytes:
        return self.who.encode()


def _records(*principals: str, start: int = 0) -> list[Rec]:
    return [Rec(start + i, who) for i, who in enumerate(principals)]


def test_a_principal_with_nothing_here_goes_to_the_lane_holding_fewest_records() -> None:
    books: PartitionLanes[Rec] = PartitionLanes(2)
    books.add(_records("a", "b", "c", "a", "d"), read_through=4)
    assert [r.offset for r in books.take(0, 10)] == [0, 2, 3]  # a, c, a
    assert [r.offset for r in books.take(1, 10)] == [1, 4]  # b, d


def test_a_principals_records_stay_on_its_lane_until_all_have_committed() -> None:
    books: PartitionLanes[Rec] = PartitionLanes(2)
    books.add(_records("a", "b"), read_through=1)
    assert books.take(0, 10) == [Rec(0, "a")]
    # b's lane is emptier now, but a still has a record in flight on lane 0.
    books.add(_records("a", start=2), read_through=2)
    assert books.ready() == [1]
    books.committed(0)
    assert books.take(0, 10) == [Rec(2, "a")]
    books.committed(0)
    books.take(1, 10)
    books.committed(1)
    # Nothing of a's is left: its next record may go to either lane, the emptier first.
    books.add(_records("b", start=3), read_through=3)
    books.add(_records("a", start=4), read_through=4)
    assert books.take(0, 10) == [Rec(3, "b")]
    assert books.take(1, 10) == [Rec(4, "a")]


def test_a_lane_has_one_chunk_in_flight_at_a_time() -> None:
    books: PartitionLanes[Rec] = PartitionLanes(2)
    books.add(_records("a", "a", "a"), read_through=2)
    assert books.take(0, 2) == [Rec(0, "a"), Rec(1, "a")]
    assert books.ready() == []
    books.committed(0)
    assert books.ready() == [0]
    assert books.take(0, 2) == [Rec(2, "a")]


def test_the_safe_offset_stays_below_every_record_another_chunk_or_queue_holds() -> None:
    books: PartitionLanes[Rec] = PartitionLanes(2)
    books.add(_records("a", "b", "a", "b"), read_through=3)
    books.take(0, 1)  # a@0
    books.take(1, 1)  # b@1
    assert books.safe_offset(1) == 0  # a@0 is in flight on the other lane
    books.committed(1)
    assert books.safe_offset(0) == 2  # a@2 and b@3 are queued
    books.committed(0)
    assert books.stored == 2


def test_the_safe_offset_counts_the_committing_lanes_own_queued_records() -> None:
    books: PartitionLanes[Rec] = PartitionLanes(2)
    books.add(_records("a", "a", "a"), read_through=2)
    books.take(0, 1)
    assert books.safe_offset(0) == 1


def test_with_nothing_unsettled_the_safe_offset_is_one_past_the_last_read() -> None:
    books: PartitionLanes[Rec] = PartitionLanes(3)
    books.add(_records("a", "b"), read_through=6)  # offsets 2..6 did not decode
    books.take(0, 5)
    books.take(1, 5)
    books.committed(0)
    assert books.safe_offset(1) == 7


def test_undecodable_records_alone_get_an_empty_chunk_that_moves_the_offset() -> None:
    books: PartitionLanes[Rec] = PartitionLanes(2)
    assert books.ready() == []
    books.add([], read_through=3)
    assert books.ready() == [0]
    assert books.take(0, 10) == []
    assert books.safe_offset(0) == 4
    books.committed(0)
    assert books.ready() == []


@settings(max_examples=300, deadline=None)
@given(
    lanes=st.integers(1, 4),
    steps=st.lists(
        st.one_of(
            st.tuples(st.just("add"), st.lists(st.sampled_from("abcde"), max_size=6)),
            st.tuples(st.just("take"), st.integers(0, 3)),
            st.tuples(st.just("commit"), st.integers(0, 3)),
        ),
        max_size=60,
    ),
)
def test_no_interleaving_stores_an_offset_past_an_unsettled_record_or_reorders_a_principal(
    lanes: int, steps: list[tuple[str, object]]
) -> None:
    books: PartitionLanes[Rec] = PartitionLanes(lanes)
    next_offset = 0
    unsettled: set[int] = set()
    in_flight: dict[int, list[Rec]] = {}
    taken_through: dict[str, int] = {}
    for action, arg in steps:
        if action == "add":
            assert isinstance(arg, list)
            fetched = _records(*arg, start=next_offset)
            next_offset += len(fetched) + 1  # one undecodable record after each fetch
            books.add(fetched, read_through=next_offset - 1)
            unsettled |= {r.offset for r in fetched}
        elif action == "take":
            assert isinstance(arg, int)
            lane = arg % lanes
            if lane not in books.ready():
                continue
            chunk = in_flight[lane] = books.take(lane, 2)
            principals = {r.who for r in chunk}
            for other, records in in_flight.items():
                if other != lane:
                    assert not principals & {r.who for r in records}, "a principal on two lanes"
            for record in chunk:
                assert record.offset > taken_through.get(record.who, -1), "out of order"
                taken_through[record.who] = record.offset
        else:
            assert isinstance(arg, int)
            lane = arg % lanes
            if lane not in in_flight:
                continue
            committing = {r.offset for r in in_flight.pop(lane)}
            safe = books.safe_offset(lane)
            assert all(offset >= safe for offset in unsettled - committing)
            assert safe <= next_offset
            books.committed(lane)
            unsettled -= committing
    if not unsettled and not in_flight and next_offset:
        assert books.ready() in ([], [0])


def test_once_every_chunk_has_finished_the_settled_offset_is_below_the_first_queued() -> None:
    books: PartitionLanes[Rec] = PartitionLanes(2)
    books.add(_records("a", "b", "a", "b"), read_through=3)
    books.take(0, 1)  # a@0
    books.take(1, 1)  # b@1
    books.safe_offset(0)
    books.committed(0)  # stored 1: b@1 was still in flight
    books.safe_offset(1)
    books.committed(1)  # stored 2: a@2 was queued
    assert books.stored == 2
    assert books.settled_offset() == 2
    books.take(0, 5)
    books.take(1, 5)
    books.safe_offset(1)
    books.committed(1)  # b@3 committed while a@2 was in flight: stored stays at 2
    books.safe_offset(0)
    books.committed(0)
    assert books.settled_offset() == 4


def test_a_settled_offset_is_refused_while_a_chunk_is_in_flight() -> None:
    books: PartitionLanes[Rec] = PartitionLanes(2)
    books.add(_records("a"), read_through=0)
    books.take(0, 1)
    with pytest.raises(RuntimeError):
        books.settled_offset()
