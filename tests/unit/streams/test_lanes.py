"""One project at a time, in order; different projects concurrently; bounded in flight."""

from __future__ import annotations

import asyncio

from engram.streams.lanes import KeyLanes
from tests.support.conditions import let_others_run


async def test_items_of_one_key_run_in_order_and_keys_run_concurrently() -> None:
    seen: list[tuple[str, int]] = []
    running = 0
    peak = 0
    gate = asyncio.Event()

    async def handle(item: tuple[str, int]) -> None:
        nonlocal running, peak
        running += 1
        peak = max(peak, running)
        await gate.wait()
        seen.append(item)
        running -= 1

    lanes: KeyLanes[tuple[str, int]] = KeyLanes(handle, max_in_flight=100)
    for i in range(5):
        for key in ("a", "b", "c"):
            await lanes.submit(key, (key, i))
    await let_others_run()
    assert peak == 3, "one item per key at a time, all keys at once"
    gate.set()
    await lanes.wait_idle()
    for key in ("a", "b", "c"):
        assert [i for k, i in seen if k == key] == list(range(5))
    assert lanes.active_keys == 0 and lanes.unfinished == 0


async def test_submit_waits_for_room_instead_of_buffering_without_limit() -> None:
    release = asyncio.Event()

    async def handle(_: int) -> None:
        await release.wait()

    lanes: KeyLanes[int] = KeyLanes(handle, max_in_flight=2)
    await lanes.submit("a", 1)
    await lanes.submit("b", 2)
    third = asyncio.create_task(lanes.submit("c", 3))
    await let_others_run(20)
    assert not third.done()
    release.set()
    await asyncio.wait_for(third, 1)
    await lanes.wait_idle()


async def test_a_handler_bug_is_contained_to_its_item() -> None:
    handled: list[int] = []

    async def handle(item: int) -> None:
        if item == 1:
            raise RuntimeError("bug")
        handled.append(item)

    lanes: KeyLanes[int] = KeyLanes(handle, max_in_flight=10)
    for item in (1, 2, 3):
        await lanes.submit("a", item)
    await lanes.wait_idle()
    assert handled == [2, 3]
