"""Offsets are acknowledged over a finished prefix only, whatever order episodes finish in."""

from __future__ import annotations

import asyncio
import random

import pytest
from hypothesis import given
from hypothesis import strategies as st

from engram.streams.acks import ContiguousAcks, InOrderRelease
from tests.support.conditions import let_others_run


def test_an_episode_finished_early_waits_for_the_ones_before_it() -> None:
    acked: list[int] = []
    acks: ContiguousAcks[int] = ContiguousAcks(acked.append)
    for offset in (10, 11, 12):
        acks.track(0, offset, offset)
    assert acks.finish(0, 12) == 0 and acked == []
    assert acks.finish(0, 10) == 1 and acked == [10]
    assert acks.finish(0, 11) == 2 and acked == [10, 11, 12]
    assert acks.in_flight == 0


@given(st.permutations(list(range(30))), st.integers(min_value=1, max_value=4))
def test_the_acknowledged_prefix_never_passes_the_lowest_unfinished_episode(
    order: list[int], partitions: int
) -> None:
    acked: list[tuple[int, int]] = []
    acks: ContiguousAcks[tuple[int, int]] = ContiguousAcks(acked.append)
    for offset in range(30):
        acks.track(offset % partitions, offset, (offset % partitions, offset))
    finished: set[int] = set()
    for offset in order:
        acks.finish(offset % partitions, offset)
        finished.add(offset)
        for partition in range(partitions):
            mine = [o for p, o in acked if p == partition]
            assert mine == sorted(mine)
            lowest = acks.lowest_unfinished(partition)
            assert all(o in finished for o in mine)
            assert lowest is None or all(o < lowest for o in mine)
    assert sorted(o for _, o in acked) == list(range(30))


def test_offsets_out_of_order_are_a_bug_and_refused() -> None:
    acks: ContiguousAcks[int] = ContiguousAcks(lambda _: None)
    acks.track(0, 5, 5)
    with pytest.raises(ValueError, match="after"):
        acks.track(0, 5, 5)


def test_a_revoked_partition_is_forgotten_without_acknowledging() -> None:
    acked: list[int] = []
    acks: ContiguousAcks[int] = ContiguousAcks(acked.append)
    acks.track(3, 1, 1)
    acks.forget(3)
    assert acks.finish(3, 1) == 0 and acked == [] and acks.in_flight == 0


async def test_results_are_released_in_read_order_per_key_whatever_order_they_complete() -> None:
    released: list[tuple[str, int]] = []

    async def release(item: tuple[str, int]) -> None:
        await let_others_run()
        released.append(item)

    order: InOrderRelease[tuple[str, int]] = InOrderRelease(release)
    items = [("ana" if i % 2 else "bo", i) for i in range(40)]
    for key, offset in items:
        order.reserve(key, offset)
    shuffled = items[:]
    random.Random(7).shuffle(shuffled)
    await asyncio.gather(*(order.complete(key, offset, (key, offset)) for key, offset in shuffled))
    for key in ("ana", "bo"):
        mine = [o for k, o in released if k == key]
        assert mine == sorted(mine) and len(mine) == 20
    assert order.pending("ana") == order.pending("bo") == 0


async def test_a_key_drained_while_another_completer_waited_keeps_its_new_queue() -> None:
    released: list[int] = []
    gate = asyncio.Event()

    async def release(offset: int) -> None:
        if offset == 1:
            await gate.wait()
        released.append(offset)

    order: InOrderRelease[int] = InOrderRelease(release)
    order.reserve("k", 1)
    order.reserve("k", 2)
    first = asyncio.create_task(order.complete("k", 1, 1))
    await let_others_run()
    second = asyncio.create_task(order.complete("k", 2, 2))
    await let_others_run()
    gate.set()
    await first
    order.reserve("k", 3)  # a new queue for the key while the second completer drains
    await second
    await order.complete("k", 3, 3)
    assert released == [1, 2, 3]
