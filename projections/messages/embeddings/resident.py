"""Nearest vectors from memory: each principal's vectors held by the process that searches them,
kept in step with ``embedding_vector``, behind an approximate-nearest-neighbour index when many.

:func:`engram.projections.messages.embeddings.store.search` reads every vector of the principal on every question — 1.25 s
at 100k messages (docs/benchmarks.md). Here a process (the API's, the MCP server's) loads a
principal's vectors of one generation once and, before each search, asks the table in one
statement what changed since (migration 0036):

- **new or rewritten vectors** (``seq`` past the largest it holds): read and added in place;
- **deletions** (the principal's ``embedding_vector_epoch`` differs, or
  ``embedding_vector_emptied`` does — a principal forgotten anywhere): everything it holds of
  the principal is dropped and loaded again from the table, so a hidden message's vector or a
  forgotten principal's is never answered with once the deletion has committed;
- **another generation** active: a different key, loaded on its own.

So every process answers from what the table holds in its snapshot, whoever wrote it, and
nothing needs to be told to it. Vectors of a principal's messages are written under the
principal's lock (:mod:`engram.projections.messages.vectors`), which makes ``seq`` grow in commit order
per principal; that is what reading "past the largest" relies on.

**Exact below :data:`EXACT_BELOW` vectors** (a matrix product over the resident rows, the same
ranking as the store's). From there an HNSW graph (``usearch``, Apache-2.0, inner product on
unit vectors) is built in a worker thread while searches stay exact; once built, a search asks
it for the nearest, adds the rows written since it was built by exact scan, and scores every
candidate exactly. An approximate index can miss a true neighbour (its recall is measured in
docs/benchmarks.md); the scores it returns are exact.

Memory is bounded: at most :data:`MAX_RESIDENT_BYTES` of vectors; the least recently searched
principal is dropped first.
"""

from __future__ import annotations

import asyncio
import threading
from collections import OrderedDict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import asyncpg
import numpy as np

from engram.projections.messages.embeddings.embedder import Vectors
from engram.projections.messages.embeddings.prefilter import Quantised, candidates
from engram.projections.messages.embeddings.store import Hit, Kind, Similar, rank, searchable

EXACT_BELOW = 200_000
"""Principals with fewer vectors are searched exactly from memory (a matrix-vector product:
about 15 ms at 100k vectors of 384 dimensions on one core); from this many on an HNSW graph is
built for them — on two busy cores a graph of 100k took minutes of CPU (docs/benchmarks.md),
more than exact search costs a principal of that size in a day of questions."""
OFF_LOOP_FROM = 10_000
"""Principals with this many vectors or more are searched in a worker thread (about 1 ms of
product from here, 12 ms at 100k on this server), so the event loop serves other questions
meanwhile; below it the thread hand-off would cost more than it frees."""
MAX_RESIDENT_BYTES = 2 << 30
"""The most vector bytes one process holds (2 GiB: about 1.3M vectors of 384 dimensions)."""
CONNECTIVITY = 16
EXPANSION_ADD = 128
EXPANSION_SEARCH = 400
"""HNSW's graph degree and its search breadths at build and at query (usearch's names); the
query breadth is above the 300 candidates recall asks for."""

_STATE = """
SELECT g.name, g.dimensions, g.status,
       coalesce((SELECT e.epoch FROM embedding_vector_epoch e
                 WHERE e.generation = g.name AND e.tenant = $2 AND e.principal = $3
                   AND e.kind = $4), 0) AS epoch,
       (SELECT max(v.seq) FROM embedding_vector v
        WHERE v.generation = g.name AND v.tenant = $2 AND v.principal = $3
          AND v.kind = $4) AS seq,
       (SELECT count FROM embedding_vector_emptied) AS emptied
FROM embedding_generation g
WHERE CASE WHEN $1::text IS NULL THEN g.status = 'active' ELSE g.name = $1 END
"""
"""The generation, and what a process holding the principal's vectors compares with."""

_SINCE = """
SELECT item_id, vector, seq FROM embedding_vector
WHERE generation = $1 AND tenant = $2 AND principal = $3 AND kind = $4 AND seq > $5
ORDER BY seq
"""


@dataclass
class _Held:
    """One principal's vectors of one generation, as loaded and followed."""

    dimensions: int
    epoch: int
    emptied: int
    seq: int = 0
    ids: list[str] = field(default_factory=list)
    positions: dict[str, int] = field(default_factory=dict)
    matrix: Vectors = field(init=False)
    quantised: Quantised = field(init=False)
    """The matrix's int8 copy, which tells an exact search which rows to score
    (:mod:`engram.projections.messages.embeddings.prefilter`)."""
    graph: object | None = None
    graphed: int = 0
    """How many rows (from the first) the graph holds; later rows are scanned exactly."""
    building: bool = False

    def __post_init__(self) -> None:
        self.matrix = np.zeros((0, self.dimensions), dtype=np.float32)
        self.quantised = Quantised.of(self.matrix)

    @property
    def count(self) -> int:
        return len(self.ids)

    @property
    def nbytes(self) -> int:
        return self.count * self.dimensions * 4 + self.quantised.nbytes

    def add(self, rows: Sequence[Mapping[str, Any]]) -> list[int]:
        """Add or replace ``rows``; the positions rewritten (the graph no longer holds their
        vectors). The matrix is never written in place: a search computing on the one it took
        in a worker thread (:meth:`ResidentVectors.search`) keeps reading what it took."""
        rewritten: dict[int, np.ndarray] = {}
        fresh: list[np.ndarray] = []
        for row in rows:
            vector = np.frombuffer(row["vector"], dtype="<f4")
            at = self.positions.get(row["item_id"])
            if at is None:
                self.positions[row["item_id"]] = len(self.ids)
                fresh.append(vector)
                self.ids.append(row["item_id"])
            elif at >= len(self.ids) - len(fresh):
                fresh[at - (len(self.ids) - len(fresh))] = vector  # rewritten in the same read
            else:
                rewritten[at] = vector
            self.seq = max(self.seq, row["seq"])
        if fresh or rewritten:
            grown = np.empty((len(self.ids), self.dimensions), dtype=np.float32)
            old = len(self.ids) - len(fresh)
            grown[:old] = self.matrix[:old]
            if fresh:
                grown[old:] = np.vstack(fresh)
            for at, vector in rewritten.items():
                grown[at] = vector
            self.matrix = grown
            self.quantised = self.quantised.updated(grown, old, list(rewritten))
        return sorted(rewritten)


class ResidentVectors:
    """The vectors this process holds, by (generation, tenant, principal, kind)."""

    def __init__(
        self,
        *,
        exact_below: int = EXACT_BELOW,
        max_bytes: int = MAX_RESIDENT_BYTES,
        off_loop_from: int = OFF_LOOP_FROM,
    ) -> None:
        self._held: OrderedDict[tuple[str, str, str, str], _Held] = OrderedDict()
        self._lock = threading.Lock()
        self.exact_below = exact_below
        self.off_loop_from = off_loop_from
        self.max_bytes = max_bytes

    async def search(
        self,
        conn: asyncpg.Connection,
        tenant: str,
        principal: str,
        kind: Kind,
        query: Vectors,
        *,
        limit: int = 10,
        generation: str | None = None,
    ) -> Similar:
        """:func:`engram.projections.messages.embeddings.store.search`'s contract (the same failures, hits best first with
        their cosines, ties by id), answered from memory brought up to date first."""
        state = await conn.fetchrow(_STATE, generation, tenant, principal, kind)
        vector = searchable(state, generation, query)
        name, dimensions = state["name"], state["dimensions"]
        key = (name, tenant, principal, kind)
        held = await self._current(conn, key, dimensions, state)
        if held is None or held.count == 0 or limit < 1:
            return Similar(name, (), 0 if held is None else held.count)
        count = held.count
        if count < self.off_loop_from:
            hits = nearest(held.matrix, held.ids, held.graph, held.graphed, vector, limit)
            return Similar(name, hits, count)
        # numpy's product, numkong's and usearch's search release the GIL: the event loop
        # serves the other requests' statements meanwhile. ``nearest`` reads what it is given,
        # and the arrays it reads are never written (``_Held.add`` makes new ones).
        taken = (held.matrix, held.ids[:count], held.graph, held.graphed)
        return Similar(
            name,
            await asyncio.to_thread(nearest, *taken, vector, limit, held.quantised),
            count,
        )

    def forget(self) -> None:
        """Drop everything held (tests; a process that wants its memory back)."""
        with self._lock:
            self._held.clear()

    def graphed(self, generation: str, tenant: str, principal: str, kind: Kind) -> int:
        """How many of the principal's vectors this process's graph holds (0: none built)."""
        held = self._held.get((generation, tenant, principal, kind))
        return 0 if held is None or held.graph is None else held.graphed

    def snapshot(
        self, generation: str, tenant: str, principal: str, kind: Kind
    ) -> tuple[Vectors, list[str], Quantised] | None:
        """The principal's matrix, ids and int8 copy as held now (benchmarks: what a search
        reads); None if not loaded."""
        held = self._held.get((generation, tenant, principal, kind))
        return None if held is None else (held.matrix, held.ids[:], held.quantised)

    def holds(self, generation: str, tenant: str, principal: str, kind: Kind) -> int:
        """How many vectors of the principal this process holds (0: none loaded)."""
        held = self._held.get((generation, tenant, principal, kind))
        return 0 if held is None else held.count

    async def _current(
        self,
        conn: asyncpg.Connection,
        key: tuple[str, str, str, str],
        dimensions: int,
        state: asyncpg.Record,
    ) -> _Held | None:
        if state["seq"] is None:
            with self._lock:
                self._held.pop(key, None)
            return None
        held = self._held.get(key)
        if (
            held is None
            or held.epoch != state["epoch"]
            or held.emptied != state["emptied"]
            or held.dimensions != dimensions
        ):
            held = _Held(dimensions=dimensions, epoch=state["epoch"], emptied=state["emptied"])
            held.seq = -1
        if held.seq < state["seq"]:
            rows = await conn.fetch(_SINCE, *key, held.seq)
            if held.seq < 0 and len(rows) >= self.off_loop_from:
                # A whole load, into a holding no one else sees yet: parsed and quantised in a
                # worker thread (about a second at 100k), not on the event loop.
                await asyncio.to_thread(held.add, rows)
            else:
                with self._lock:
                    rewritten = held.add(rows)
                    if rewritten and held.graph is not None and min(rewritten) < held.graphed:
                        held.graph, held.graphed = None, 0  # a vector the graph holds changed
        with self._lock:
            self._held[key] = held
            self._held.move_to_end(key)
            self._evict()
        if held.count >= self.exact_below and held.graph is None and not held.building:
            held.building = True
            threading.Thread(target=self._build, args=(held,), daemon=True).start()
        return held

    def _evict(self) -> None:
        total = sum(h.nbytes for h in self._held.values())
        while total > self.max_bytes and len(self._held) > 1:
            _, dropped = self._held.popitem(last=False)
            total -= dropped.nbytes

    def _build(self, held: _Held) -> None:
        """An HNSW graph of the rows held now, built off the event loop; searches stay exact
        until it is there."""
        from usearch.index import Index

        try:
            count = held.count
            graph = Index(
                ndim=held.dimensions,
                metric="ip",
                dtype="f32",
                connectivity=CONNECTIVITY,
                expansion_add=EXPANSION_ADD,
                expansion_search=EXPANSION_SEARCH,
            )
            graph.add(np.arange(count, dtype=np.uint64), held.matrix[:count], threads=1)
            with self._lock:
                held.graph, held.graphed = graph, count
        finally:
            held.building = False


def nearest(
    matrix: Vectors,
    ids: Sequence[str],
    graph: object | None,
    graphed: int,
    query: Vectors,
    limit: int,
    quantised: Quantised | None = None,
) -> tuple[Hit, ...]:
    """The ``limit`` rows of ``matrix`` (one per id) nearest ``query``, scored exactly: all of
    them, or those ``quantised`` (the matrix's int8 copy) says can be among them (the same
    answer, :mod:`engram.projections.messages.embeddings.prefilter`), or with ``graph``
    (holding the first ``graphed`` rows) its nearest and every row after those."""
    if graph is None:
        kept = None if quantised is None else candidates(quantised, query, limit)
        if kept is None:
            return rank(matrix, ids, query, limit)
        return rank(matrix[kept], [ids[i] for i in kept.tolist()], query, limit)
    found = graph.search(query, min(limit, graphed), threads=1)  # type: ignore[attr-defined]
    near = {int(k) for k in np.atleast_1d(found.keys)}
    rows = sorted(near | set(range(graphed, len(ids))))
    chosen = np.asarray(rows, dtype=np.int64)
    return rank(matrix[chosen], [ids[i] for i in rows], query, limit)


RESIDENT = ResidentVectors()
"""The process's resident vectors: recall's semantic list searches through it."""
