"""The int8 prefilter leaves out only rows that cannot be among the nearest: exact search
through it answers as the full float32 scan does, hits, scores and ties by id alike, on
clustered vectors (the benches' repeated texts), spread ones and duplicates."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from engram.projections.messages.embeddings.embedder import unit_rows
from engram.projections.messages.embeddings.prefilter import MOST_KEPT, Quantised, candidates
from engram.projections.messages.embeddings.resident import nearest
from engram.projections.messages.embeddings.store import rank


def clustered(seed: int, count: int, dimensions: int = 64, centres: int = 20) -> np.ndarray:
    rng = np.random.default_rng(seed)
    base = rng.standard_normal((centres, dimensions))
    rows = base[rng.integers(0, centres, count)] + rng.normal(0, 0.3, (count, dimensions))
    return unit_rows(rows, dimensions=dimensions)


@given(seed=st.integers(0, 10_000), limit=st.sampled_from([1, 10, 100, 300]))
@settings(max_examples=40, deadline=None)
def test_the_answer_is_the_full_scans(seed: int, limit: int) -> None:
    matrix = clustered(seed, 3_000)
    ids = [f"m{i:05d}" for i in range(len(matrix))]
    query = clustered(seed + 1, 1)[0]
    quantised = Quantised.of(matrix)
    assert nearest(matrix, ids, None, 0, query, limit, quantised) == rank(matrix, ids, query, limit)


def test_few_rows_are_scored_and_none_that_could_be_among_the_nearest_is_left_out() -> None:
    matrix = clustered(5, 20_000, dimensions=384, centres=200)
    query = clustered(6, 1, dimensions=384, centres=200)[0]
    kept = candidates(Quantised.of(matrix), query, 300)
    assert kept is not None and len(kept) < 0.1 * len(matrix)
    scores = matrix @ query
    threshold = np.sort(scores)[-300]
    assert set(np.flatnonzero(scores >= threshold)) <= set(kept.tolist())


def test_ties_at_the_boundary_are_all_kept_and_broken_by_id() -> None:
    rng = np.random.default_rng(9)
    matrix = unit_rows(rng.standard_normal((2_000, 32)), dimensions=32)
    query = unit_rows(rng.standard_normal((1, 32)), dimensions=32)[0]
    matrix[100:140] = query  # forty rows equal to the question, more than the limit
    ids = [f"m{i:05d}" for i in range(len(matrix))][::-1]
    found = nearest(matrix, ids, None, 0, query, 10, Quantised.of(matrix))
    assert found == rank(matrix, ids, query, 10)
    assert [h.item_id for h in found] == sorted(ids[i] for i in range(100, 140))[:10]


def test_nothing_to_leave_out_is_a_full_scan() -> None:
    matrix = clustered(3, 50)
    quantised = Quantised.of(matrix)
    assert candidates(quantised, matrix[0], 50) is None  # every row asked for
    assert candidates(quantised, np.zeros(64, dtype=np.float32), 5) is None  # a zero question
    spread = unit_rows(np.random.default_rng(2).standard_normal((400, 4)), dimensions=4)
    kept = candidates(Quantised.of(spread), spread[0], 150)
    assert kept is None or len(kept) <= MOST_KEPT * 400


def test_an_updated_copy_is_the_copy_of_the_new_matrix() -> None:
    matrix = clustered(1, 500)
    quantised = Quantised.of(matrix)
    grown = np.vstack([matrix, clustered(2, 30)])
    grown[7] = grown[3]
    updated = quantised.updated(grown, 500, [7])
    again = Quantised.of(grown)
    for mine, truth in zip(updated._columns(), again._columns(), strict=True):
        assert np.array_equal(mine, truth)
    assert quantised.rows[7].tolist() == Quantised.of(matrix).rows[7].tolist(), "not written"


def test_the_empty_matrix() -> None:
    empty = Quantised.of(np.zeros((0, 8), dtype=np.float32))
    assert empty.rows.shape == (0, 8) and empty.nbytes == 0
    one = unit_rows(np.ones((1, 8)), dimensions=8)
    assert np.array_equal(empty.updated(one, 0, []).rows, Quantised.of(one).rows)
