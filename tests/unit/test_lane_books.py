"""The lanes' books (projections.beliefs.lanes): a principal's records on one lane in offset order, one
chunk per lane at a time, lanes side by side only when a partition is behind, and a stored
offset that never passes an unsettled record."""

from __future__ import annotations

from dataclasses import dataclass

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engram.projections.beliefs.lanes import Chunk, PartitionLanes


@dataclass(frozen=True)
class Rec:
    offset: int
    who: str

    @property
    def lane_key(self) -> bytes:
        return self.who.encode()


def _records(*principals: str, start: int = 0) -> list[Rec]:
    return [Rec(start + i, who) for i, who in enumerate(principals)]


def _offsets(chunk: Chunk[Rec]) -> list[int]:
    return [r.offset for r in chunk.records]


def test_a_principal_with_nothing_here_goes_to_the_lane_holding_fewest_records() -> None:
    books: PartitionLanes[Rec] = PartitionLanes(2)
    books.add(_records("a", "b", "c", "a", "d"), read_through=4)
    first, second = books.next_chunks(limit=2)  # a lane's share: one record
    assert (first.lanes, _offsets(first)) == ((0,), [0, 2])  # a, c (a's second waits)
    assert (second.lanes, _offsets(second)) == ((1,), [1, 4])  # b, d


def test_a_principals_records_stay_on_its_lane_until_all_have_committed() -> None:
    books: PartitionLanes[Rec] = PartitionLanes(2)
    books.add(_records("a", "b"), read_through=1)
    a_chunk, b_chunk = books.next_chunks(limit=2)
    books.committed(b_chunk)
    # Lane 1 is emptier now, but a still has a record in flight on lane 0.
    books.add(_records("a", start=2), read_through=2)
    assert books.next_chunks(limit=2) == []
    books.committed(a_chunk)
    (again,) = books.next_chunks(limit=2)
    assert (again.lanes, _offsets(again)) == ((0,), [2])
    books.committed(again)
    # Nothing of a's is left: its next record may go to either lane, the emptier first.
    books.add(_records("b", "a", start=3), read_through=4)
    b_next, a_next = books.next_chunks(limit=2)
    assert (b_next.lanes, a_next.lanes) == ((0,), (1,))


def test_a_lane_has_one_chunk_in_flight_at_a_time() -> None:
    books: PartitionLanes[Rec] = PartitionLanes(2)
    books.add(_records("a", "a", "a"), read_through=2)
    (chunk,) = books.next_chunks(limit=2)
    assert _offsets(chunk) == [0, 1]
    assert books.next_chunks(limit=2) == []
    books.committed(chunk)
    (rest,) = books.next_chunks(limit=2)
    assert _offsets(rest) == [2]


def test_a_caught_up_partition_applies_every_lanes_records_in_one_chunk() -> None:
    books: PartitionLanes[Rec] = PartitionLanes(2)
    books.add(_records("a", "b", "c", "b"), read_through=3)  # under a share of 25
    (chunk,) = books.next_chunks(limit=100)
    assert sorted(chunk.lanes) == [0, 1]
    assert _offsets(chunk) == [0, 1, 2, 3]


def test_a_behind_partition_applies_its_lanes_side_by_side() -> None:
    books: PartitionLanes[Rec] = PartitionLanes(2)
    books.add(_records(*"ab" * 30), read_through=59)  # 30 a lane, a share is 25
    first, second = books.next_chunks(limit=100)
    assert (first.lanes, second.lanes) == ((0,), (1,))
    assert len(first.records) == len(second.records) == 30


def test_a_group_short_of_its_share_waits_for_the_chunk_in_flight() -> None:
    books: PartitionLanes[Rec] = PartitionLanes(2)
    books.add(_records(*"a" * 30), read_through=29)
    (a_chunk,) = books.next_chunks(limit=100)
    books.add(_records("b", "b", start=30), read_through=31)
    assert books.next_chunks(limit=100) == []  # two records are not worth a chunk beside it
    books.committed(a_chunk)
    books.add(_records("a", start=32), read_through=32)
    (together,) = books.next_chunks(limit=100)
    assert _offsets(together) == [30, 31, 32]


def test_the_lane_waiting_longest_is_grouped_first() -> None:
    books: PartitionLanes[Rec] = PartitionLanes(2)  # a share of two records with limit 8
    books.add(_records("a", "a", "a"), read_through=2)
    (a_chunk,) = books.next_chunks(limit=8)
    books.add(_records("b", start=3), read_through=3)  # short of a share beside a's chunk
    books.add(_records("a", "a", "a", start=4), read_through=6)
    assert books.next_chunks(limit=8) == []
    books.committed(a_chunk)
    # a's lane alone has a share again, but b has waited longer: it goes first, a's with it.
    (oldest_first,) = books.next_chunks(limit=8)
    assert oldest_first.lanes == (1, 0)
    assert _offsets(oldest_first) == [3, 4, 5, 6]


def test_the_safe_offset_stays_below_every_record_another_chunk_or_queue_holds() -> None:
    books: PartitionLanes[Rec] = PartitionLanes(2)
    books.add(_records("a", "b", "a", "b"), read_through=3)
    a_chunk, b_chunk = books.next_chunks(limit=1)
    assert books.safe_offset(b_chunk) == 0  # a@0 is in flight on the other lane
    books.committed(b_chunk)
    assert books.safe_offset(a_chunk) == 2  # a@2 and b@3 are queued
    books.committed(a_chunk)
    assert books.stored == 2


def test_the_safe_offset_counts_the_committing_lanes_own_queued_records() -> None:
    books: PartitionLanes[Rec] = PartitionLanes(2)
    books.add(_records("a", "a", "a"), read_through=2)
    (chunk,) = books.next_chunks(limit=1)
    assert books.safe_offset(chunk) == 1


def test_with_nothing_unsettled_the_safe_offset_is_one_past_the_last_read() -> None:
    books: PartitionLanes[Rec] = PartitionLanes(3)
    books.add(_records("a", "b"), read_through=6)  # offsets 2..6 did not decode
    a_chunk, b_chunk = books.next_chunks(limit=3)
    books.committed(a_chunk)
    assert books.safe_offset(b_chunk) == 7


def test_undecodable_records_alone_get_an_empty_chunk_that_moves_the_offset() -> None:
    books: PartitionLanes[Rec] = PartitionLanes(2)
    assert books.next_chunks(limit=10) == []
    books.add([], read_through=3)
    (empty,) = books.next_chunks(limit=10)
    assert empty == Chunk((0,), [])
    assert books.safe_offset(empty) == 4
    books.committed(empty)
    assert books.next_chunks(limit=10) == []


def test_once_every_chunk_has_finished_the_settled_offset_is_below_the_first_queued() -> None:
    books: PartitionLanes[Rec] = PartitionLanes(2)
    books.add(_records("a", "b", "a", "b"), read_through=3)
    a_chunk, b_chunk = books.next_chunks(limit=1)
    books.safe_offset(a_chunk)
    books.committed(a_chunk)  # stored 1: b@1 was still in flight
    books.safe_offset(b_chunk)
    books.committed(b_chunk)  # stored 2: a@2 was queued
    assert books.settled_offset() == 2
    a_chunk, b_chunk = books.next_chunks(limit=1)
    books.safe_offset(b_chunk)
    books.committed(b_chunk)  # b@3 committed while a@2 was in flight: stored stays at 2
    books.safe_offset(a_chunk)
    books.committed(a_chunk)
    assert books.stored == books.settled_offset() == 4


def test_a_settled_offset_is_refused_while_a_chunk_is_in_flight() -> None:
    books: PartitionLanes[Rec] = PartitionLanes(2)
    books.add(_records("a"), read_through=0)
    books.next_chunks(limit=1)
    with pytest.raises(RuntimeError):
        books.settled_offset()


@settings(max_examples=400, deadline=None)
@given(
    lanes=st.integers(1, 4),
    limit=st.integers(1, 12),
    steps=st.lists(
        st.one_of(
            st.tuples(st.just("add"), st.lists(st.sampled_from("abcde"), max_size=8)),
            st.tuples(st.just("start"), st.just(0)),
            st.tuples(st.just("commit"), st.integers(0, 7)),
        ),
        max_size=60,
    ),
)
def test_no_interleaving_stores_an_offset_past_an_unsettled_record_or_reorders_a_principal(
    lanes: int, limit: int, steps: list[tuple[str, object]]
) -> None:
    books: PartitionLanes[Rec] = PartitionLanes(lanes)
    next_offset = 0
    unsettled: set[int] = set()
    in_flight: list[Chunk[Rec]] = []
    taken_through: dict[str, int] = {}
    for action, arg in steps:
        if action == "add":
            assert isinstance(arg, list)
            fetched = _records(*arg, start=next_offset)
            next_offset += len(fetched) + 1  # one undecodable record after each fetch
            books.add(fetched, read_through=next_offset - 1)
            unsettled |= {r.offset for r in fetched}
        elif action == "start":
            for chunk in books.next_chunks(limit):
                assert len(chunk.records) <= limit
                assert [r.offset for r in chunk.records] == sorted(r.offset for r in chunk.records)
                mine = {r.who for r in chunk.records}
                for other in in_flight:
                    assert not set(chunk.lanes) & set(other.lanes), "a lane in two chunks"
                    assert not mine & {r.who for r in other.records}, "a principal in two"
                for record in chunk.records:
                    assert record.offset > taken_through.get(record.who, -1), "out of order"
                    taken_through[record.who] = record.offset
                in_flight.append(chunk)
        elif in_flight:
            assert isinstance(arg, int)
            chunk = in_flight.pop(arg % len(in_flight))
            committing = {r.offset for r in chunk.records}
            safe = books.safe_offset(chunk)
            assert all(offset >= safe for offset in unsettled - committing)
            assert safe <= next_offset
            books.committed(chunk)
            unsettled -= committing
    if not in_flight:
        assert books.settled_offset() <= min(unsettled, default=next_offset)
