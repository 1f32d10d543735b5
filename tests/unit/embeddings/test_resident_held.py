"""A principal's held vectors (``_Held``): each item keeps its own row through loads and
rewrites, and a matrix once handed out is never written (a search in a worker thread reads the
one it took while the event loop takes in newer vectors)."""

from __future__ import annotations

import numpy as np

from engram.projections.messages.embeddings.resident import _Held, nearest
from engram.projections.messages.embeddings.store import rank


def row(item: str, vector: np.ndarray, seq: int) -> dict[str, object]:
    return {"item_id": item, "vector": vector.astype("<f4").tobytes(), "seq": seq}


def unit(seed: int, count: int) -> np.ndarray:
    vectors = np.random.default_rng(seed).standard_normal((count, 8)).astype(np.float32)
    unit_rows: np.ndarray = vectors / np.linalg.norm(vectors, axis=1, keepdims=True)
    return unit_rows


def test_each_item_keeps_its_row_through_a_load_and_a_rewrite() -> None:
    held = _Held(dimensions=8, epoch=0, emptied=0)
    first = unit(1, 5)
    assert held.add([row(f"m{i}", v, i + 1) for i, v in enumerate(first)]) == []
    assert held.positions == {f"m{i}": i for i in range(5)}
    taken = held.matrix
    again = unit(2, 2)
    rewritten = held.add([row("m3", again[0], 6), row("m5", again[1], 7)])
    assert rewritten == [3]
    assert held.ids == ["m0", "m1", "m2", "m3", "m4", "m5"] and held.seq == 7
    assert np.array_equal(held.matrix[3], again[0]) and np.array_equal(held.matrix[5], again[1])
    for i in (0, 1, 2, 4):
        assert np.array_equal(held.matrix[i], first[i])
    assert np.array_equal(taken, first), "the matrix handed out before was not written"
    assert held.matrix is not taken


def test_a_rewrite_alone_makes_a_new_matrix_too() -> None:
    held = _Held(dimensions=8, epoch=0, emptied=0)
    first = unit(3, 3)
    held.add([row(f"m{i}", v, i + 1) for i, v in enumerate(first)])
    taken = held.matrix
    assert held.add([row("m1", first[0], 9)]) == [1]
    assert np.array_equal(taken[1], first[1]) and np.array_equal(held.matrix[1], first[0])


def test_nearest_without_a_graph_is_the_exact_ranking() -> None:
    matrix, query = unit(4, 50), unit(5, 1)[0]
    ids = [f"m{i:02d}" for i in range(50)]
    assert nearest(matrix, ids, None, 0, query, 7) == rank(matrix, ids, query, 7)
