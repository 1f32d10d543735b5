"""Exact ranking: best cosine first, ties by id whatever order the rows came in, exact top-k."""

from __future__ import annotations

from itertools import pairwise

import numpy as np

from engram.projections.messages.embeddings.store import rank


def test_ties_break_by_id_not_by_row_order() -> None:
    matrix = np.array([[1, 0], [0, 1], [1, 0], [1, 0]], dtype=np.float32)
    ids = ["c", "z", "a", "b"]
    hits = rank(matrix, ids, np.array([1, 0], dtype=np.float32), 2)
    assert [h.item_id for h in hits] == ["a", "b"]
    assert [h.item_id for h in rank(matrix, ids, np.array([1, 0], dtype=np.float32), 9)] == [
        "a",
        "b",
        "c",
        "z",
    ]


def test_the_top_k_is_the_exact_top_k() -> None:
    generator = np.random.default_rng(7)
    matrix = generator.standard_normal((500, 16)).astype(np.float32)
    matrix /= np.linalg.norm(matrix, axis=1, keepdims=True)
    query = matrix[3]
    ids = [f"i{n:03d}" for n in range(500)]
    hits = rank(matrix, ids, query, 10)
    expected = sorted(range(500), key=lambda n: (-float(matrix[n] @ query), ids[n]))[:10]
    assert [h.item_id for h in hits] == [ids[n] for n in expected]
    assert hits[0].item_id == "i003" and abs(hits[0].score - 1.0) < 1e-5
    assert all(a.score >= b.score for a, b in pairwise(hits))
