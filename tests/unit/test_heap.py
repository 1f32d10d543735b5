"""The projector's collector settings: young collections rarer, older generations as they were."""

from __future__ import annotations

import gc
from collections.abc import Iterator

import pytest

from engram.infra.heap import YOUNG_THRESHOLD, collect_young_less_often


@pytest.fixture
def restored_thresholds() -> Iterator[tuple[int, int, int]]:
    before = gc.get_threshold()
    yield before
    gc.set_threshold(*before)


def test_collecting_young_less_often_changes_only_the_young_generations_threshold(
    restored_thresholds: tuple[int, int, int],
) -> None:
    _, middle, oldest = restored_thresholds
    collect_young_less_often()
    assert gc.get_threshold() == (YOUNG_THRESHOLD, middle, oldest)
    assert gc.isenabled()


def test_a_young_threshold_above_a_chunks_live_objects_lets_the_chunk_go_uncollected(
    restored_thresholds: tuple[int, int, int],
) -> None:
    """A chunk's worth of short-lived containers (500 batches, ~60 each) allocated and freed
    triggers no young collection at the projector's threshold, and dozens at CPython's."""
    runs: list[int] = []

    def count(phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            runs.append(info["generation"])

    def one_chunk() -> int:
        runs.clear()
        gc.collect()
        runs.clear()
        gc.callbacks.append(count)
        try:
            chunk = [[{"row": i}] for i in range(15_000)]  # 30,000 containers alive at once
            del chunk
        finally:
            gc.callbacks.remove(count)
        return len(runs)

    gc.set_threshold(700, *restored_thresholds[1:])
    assert one_chunk() > 20
    collect_young_less_often()
    assert one_chunk() == 0
