"""Backlog rows are written a burst per statement, and every waiter learns its own row."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Mapping, Sequence

import pytest

from engram.streams.pending import PendingRecorder
from engram.watermarks.backlog import BacklogEntry, Position
from tests.support.conditions import let_others_run
from tests.support.episodes import EPOCH


def entry(offset: int, partition: int = 0) -> BacklogEntry:
    return BacklogEntry("episodes", partition, offset, "t", "p", uuid.uuid4(), EPOCH, EPOCH)


class Table:
    """Stands in for formation_backlog: remembers statements, returns attempts per row."""

    def __init__(self, attempts: Mapping[int, int] | None = None):
        self.statements: list[list[int]] = []
        self._attempts = attempts or {}

    async def write_many(self, entries: Sequence[BacklogEntry]) -> dict[Position, int]:
        self.statements.append([e.offset for e in entries])
        await let_others_run()  # a round trip: other tasks take their step
        return {(e.topic, e.partition, e.offset): self._attempts.get(e.offset, 0) for e in entries}


async def test_a_burst_of_records_is_written_in_one_statement() -> None:
    table = Table({3: 2})
    recorder = PendingRecorder(table.write_many)
    futures = [recorder.record(entry(offset)) for offset in range(10)]
    assert await asyncio.gather(*futures) == [0, 0, 0, 2, 0, 0, 0, 0, 0, 0]
    assert table.statements == [list(range(10))]


async def test_records_that_keep_arriving_join_the_statement_being_gathered() -> None:
    table = Table()
    recorder = PendingRecorder(table.write_many)

    async def reader() -> list[asyncio.Future[int]]:
        futures = []
        for offset in range(5):  # one record per turn of the loop, as faust hands them over
            futures.append(recorder.record(entry(offset)))
            await let_others_run()
        return futures

    await asyncio.gather(*await reader())
    assert table.statements == [list(range(5))]


async def test_a_group_never_exceeds_its_bound() -> None:
    table = Table()
    recorder = PendingRecorder(table.write_many, max_group=4)
    await asyncio.gather(*[recorder.record(entry(offset)) for offset in range(10)])
    assert sorted(o for statement in table.statements for o in statement) == list(range(10))
    assert [len(statement) for statement in table.statements] == [4, 4, 2]


async def test_a_position_queued_twice_is_written_once_and_both_waiters_get_its_row() -> None:
    table = Table({7: 1})
    recorder = PendingRecorder(table.write_many)
    first, second = recorder.record(entry(7)), recorder.record(entry(7))
    assert list(await asyncio.gather(first, second)) == [1, 1]
    assert table.statements == [[7]]


async def test_a_failed_statement_fails_its_waiters_and_the_next_records_are_still_written() -> (
    None
):
    table = Table()
    calls = 0

    async def fail_once(entries: Sequence[BacklogEntry]) -> dict[Position, int]:
        nonlocal calls
        calls += 1
        if calls == 1:
            raise RuntimeError("constraint violated")
        return await table.write_many(entries)

    recorder = PendingRecorder(fail_once)
    doomed = recorder.record(entry(1))
    with pytest.raises(RuntimeError, match="constraint"):
        await doomed
    assert await recorder.record(entry(2)) == 0
    assert table.statements == [[2]]


async def test_closing_cancels_the_records_still_waiting() -> None:
    started = asyncio.Event()

    async def never_answers(entries: Sequence[BacklogEntry]) -> dict[Position, int]:
        started.set()
        await asyncio.Event().wait()
        raise AssertionError("unreachable")

    recorder = PendingRecorder(never_answers)
    waiting = recorder.record(entry(1))
    await started.wait()
    await recorder.close()
    assert waiting.cancelled()
