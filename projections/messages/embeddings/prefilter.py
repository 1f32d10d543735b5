"""Exact nearest vectors reading a quarter of the bytes: an 8-bit copy of a principal's matrix
says which rows can be among the nearest, and only those are scored in float32.

The float32 product over every row is what the semantic list cost at scale: about 11 ms of CPU
at 100k vectors of 384 dimensions on this server, on every question (docs/benchmarks.md,
"Recall under load"). Each row ``x`` is kept also as ``round(x * s)`` in int8 (``s = 127 /
max|x_i|``, its own scale), and the question ``v`` likewise; an integer product (numkong's
SIMD kernel, a dependency of usearch already; about 2 ms at 100k) gives every row an
approximate score ``a`` whose distance from the true one is bounded by the two roundings:
``|x.v - a| <= |x - x'| |v| + |x'| |v - v'|`` (Cauchy-Schwarz; ``x'``, ``v'`` the rounded
vectors), plus a margin for float arithmetic. At least ``limit`` rows score above the
``limit``-th best lower bound, so a row whose upper bound is below it cannot be among the
nearest; every other row is scored exactly as
:func:`engram.projections.messages.embeddings.store.rank` scores all of them (the same float32
product, row by row: the same scores to the bit). Nothing is approximate: the answer is the
full scan's, ties by id included. When the bound keeps too many rows (more than
:data:`MOST_KEPT` of them) the caller scans them all.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numkong
import numpy as np
from numpy.typing import NDArray

from engram.projections.messages.embeddings.embedder import Vectors

LEVELS = 127
"""The int8 scale's top: a row's largest coordinate is stored as ±127."""
MARGIN = 1e-4
"""Added to every row's bound: float32's rounding of a 384-term product (at most ~2.3e-5 for
unit vectors) and float64's of the bound itself, with room to spare."""
MOST_KEPT = 0.25
"""The share of rows above which the bound is not worth it: scoring them all is cheaper than
gathering and scoring that many."""
CHUNK = 8192
"""Rows quantised at a time (bounds the float64 scratch of a large load)."""


@dataclass(frozen=True, slots=True)
class Quantised:
    """A matrix's int8 copy: each row, the reciprocal of its scale, its rounding error's norm
    and its rounded norm (the bound's two terms)."""

    rows: NDArray[np.int8]
    inverse: NDArray[np.float64]
    error: NDArray[np.float64]
    norm: NDArray[np.float64]

    @classmethod
    def of(cls, matrix: Vectors) -> Quantised:
        parts = [_quantise(matrix[s : s + CHUNK]) for s in range(0, len(matrix), CHUNK)]
        if not parts:
            return cls(
                np.zeros((0, matrix.shape[1]), dtype=np.int8),
                *(np.zeros(0, dtype=np.float64) for _ in range(3)),
            )
        return cls(*(np.concatenate(column) for column in zip(*parts, strict=True)))

    def updated(self, matrix: Vectors, old: int, rewritten: Sequence[int]) -> Quantised:
        """The copy of ``matrix``, whose first ``old`` rows are this copy's but for
        ``rewritten``; new arrays (a search may be reading these in a worker thread)."""
        fresh = Quantised.of(matrix[old:])
        columns = []
        for mine, theirs in zip(self._columns(), fresh._columns(), strict=True):
            grown = np.empty((len(matrix), *mine.shape[1:]), dtype=mine.dtype)
            grown[:old] = mine[:old]
            grown[old:] = theirs
            columns.append(grown)
        if rewritten:
            at = np.asarray(sorted(rewritten), dtype=np.int64)
            for column, value in zip(columns, _quantise(matrix[at]), strict=True):
                column[at] = value
        return Quantised(*columns)

    @property
    def nbytes(self) -> int:
        return sum(c.nbytes for c in self._columns())

    def _columns(self) -> tuple[np.ndarray, ...]:
        return (self.rows, self.inverse, self.error, self.norm)


def _quantise(
    matrix: Vectors,
) -> tuple[NDArray[np.int8], NDArray[np.float64], NDArray[np.float64], NDArray[np.float64]]:
    exact = np.asarray(matrix, dtype=np.float64)
    peak = np.abs(exact).max(axis=1) if len(exact) else np.zeros(0)
    scale = np.divide(LEVELS, peak, out=np.ones_like(peak), where=peak > 0)
    rows = np.rint(exact * scale[:, None]).astype(np.int8)
    rounded = rows / scale[:, None]
    error = np.linalg.norm(exact - rounded, axis=1)
    return rows, 1.0 / scale, error, np.linalg.norm(rounded, axis=1)


def candidates(quantised: Quantised, query: Vectors, limit: int) -> NDArray[np.int64] | None:
    """The rows (ascending) that can be among the ``limit`` nearest ``query``: every row whose
    exact score could reach the ``limit``-th best; None when that is more than
    :data:`MOST_KEPT` of them, or there is nothing to leave out."""
    count = len(quantised.rows)
    vector = np.asarray(query, dtype=np.float64).reshape(-1)
    peak = float(np.abs(vector).max()) if vector.size else 0.0
    if not 0 < limit < count or peak == 0.0:
        return None
    scale = LEVELS / peak
    rounded = np.rint(vector * scale).astype(np.int8)
    query_error = float(np.linalg.norm(vector - rounded / scale))
    products = np.asarray(numkong.inner(quantised.rows, rounded), dtype=np.float64)
    approximate = products * quantised.inverse / scale
    slack = quantised.error * float(np.linalg.norm(vector)) + quantised.norm * query_error + MARGIN
    floor = np.partition(approximate - slack, count - limit)[count - limit]
    kept = np.flatnonzero(approximate + slack >= floor)
    return None if len(kept) > MOST_KEPT * count else kept
