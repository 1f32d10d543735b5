"""The read bench on a tiny corpus: it forms through the projector's store, serves every kind
of request without an error, and reports latencies (the million-belief run is manual)."""

from __future__ import annotations

from pathlib import Path

import asyncpg
import pytest

from bench.read_api import measure, measure_queries
from bench.read_corpus import BELIEFS_PER_BATCH, Corpus, generate_here
from tests.support.isolation import Isolated

pytestmark = pytest.mark.e2e


async def test_the_read_bench_forms_its_corpus_through_the_store_and_measures_every_read(
    isolated: Isolated, pool: asyncpg.Pool, tmp_path: Path
) -> None:
    corpus = Corpus(beliefs=220, principals=4, workers=2)
    batches = await generate_here(isolated.database_url, corpus)
    assert batches == 4 * corpus.batches_per_principal
    beliefs = await pool.fetchval("SELECT count(*) FROM belief")
    assert beliefs == batches * BELIEFS_PER_BATCH
    assert await pool.fetchval("SELECT count(*) FROM refusal") == batches
    assert await generate_here(isolated.database_url, corpus) == 0, "a finished corpus is reused"

    results = await measure(isolated.database_url, rate=20, requests=10, log=tmp_path / "api.log")
    for kind in ("baseline_healthz", "list_first", "list_deep", "list_filter", "detail"):
        assert results[kind]["errors"] == 0, (kind, (tmp_path / "api.log").read_text())
        assert 0 < results[kind]["p50_ms"] <= results[kind]["p99_ms"]
    queries = await measure_queries(isolated.database_url, requests=10)
    assert set(queries) == {"list_first", "detail"}
