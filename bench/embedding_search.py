"""Embedding cost and exact-similarity search latency, with a lexical baseline in the same run.

1. **Throughput** of the local default (WordLlama, 256 dimensions, the default text recipe) over
   ``--embed`` real messages cycled from ``--turns``, on one thread: texts per second of CPU time
   (per core) and of wall time, and CPU milliseconds per message.
2. **Search latency** for one principal holding ``--sizes`` vectors (10k and 100k by default),
   in a fresh, migrated database next to the configured one (dropped at the end), with as many
   vectors again spread over 50 other principals so the scope has work to do. For each size,
   ``--queries`` real questions from ``--qa`` are asked one after the other:
   - ``exact_search``: :func:`engram.projections.messages.embeddings.store.search` (one statement fetches the principal's
     vectors, numpy scores them), the query already embedded;
   - ``embed_and_search``: embedding the question too, what a recall request would pay;
   - ``in_memory_scoring``: :func:`engram.projections.messages.embeddings.store.rank` (the scoring and top 10 the search
     runs) over a matrix already in memory: what search costs without fetching the vectors,
     the floor of any per-principal cache;
   - ``lexical_baseline``: PostgreSQL full-text search over the same principal's message texts
     (GIN index, any-term ``to_tsquery`` with ``engram_english``, ``ts_rank``, top 10).
   p50/p99/max in milliseconds, against the read target p99 < 50 ms.

    .venv/bin/python -m bench.embedding_search \\
        --turns /work/shared/data/locomo-dev.jsonl --qa /work/shared/data/locomo-dev-qa.jsonl
"""

from __future__ import annotations

import argparse
import asyncio
import re
import statistics
import sys
import time
from collections.abc import Sequence
from pathlib import Path

import asyncpg
import numpy as np
import orjson

from engram.evaluation.recall import scratch_database
from engram.infra.settings import load_settings
from engram.projections.messages.embeddings import store
from engram.projections.messages.embeddings.generation import FUNCTION_WORDS, EmbeddingGeneration
from engram.projections.messages.embeddings.local import WordLlamaEmbedder

TENANT = "bench"
PRINCIPAL = "target"
OTHERS = 50
TARGET_P99_MS = 50.0
_WORD = re.compile(r"[a-z0-9]+")


def percentiles(samples: Sequence[float]) -> dict[str, float]:
    ordered = sorted(samples)
    cut = statistics.quantiles(ordered, n=100, method="inclusive")
    return {
        "p50_ms": round(cut[49] * 1000, 2),
        "p99_ms": round(cut[98] * 1000, 2),
        "max_ms": round(ordered[-1] * 1000, 2),
    }


def read_texts(turns: Path) -> list[str]:
    texts = []
    for line in turns.read_bytes().splitlines():
        texts += [m["content"] for m in orjson.loads(line)["messages"]]
    return texts


def read_questions(qa: Path, count: int) -> list[str]:
    return [orjson.loads(line)["question"] for line in qa.read_bytes().splitlines()][:count]


def cycled(texts: Sequence[str], count: int) -> list[str]:
    return [texts[i % len(texts)] for i in range(count)]


def throughput(
    embedder: WordLlamaEmbedder, gen: EmbeddingGeneration, texts: list[str]
) -> dict[str, float]:
    prepared = [gen.prepare(t) for t in texts]
    embedder.embed_now(prepared[:256])  # warm the tokenizer and the table
    cpu, wall = time.process_time(), time.perf_counter()
    embedder.embed_now(prepared)
    cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
    return {
        "messages": len(texts),
        "mean_chars": round(sum(map(len, texts)) / len(texts), 1),
        "texts_per_cpu_s": round(len(texts) / cpu),
        "texts_per_wall_s": round(len(texts) / wall),
        "cpu_ms_per_message": round(1000 * cpu / len(texts), 4),
    }


async def load_principal(
    conn: asyncpg.Connection,
    gen: EmbeddingGeneration,
    principal: str,
    texts: Sequence[str],
    vectors: np.ndarray,
    offset: int,
) -> None:
    rows = np.ascontiguousarray(vectors, dtype="<f4")
    await conn.copy_records_to_table(
        "embedding_vector",
        records=[
            (gen.name, TENANT, principal, "message", f"m{offset + i:07d}", rows[i].tobytes())
            for i in range(len(texts))
        ],
        columns=["generation", "tenant", "principal", "kind", "item_id", "vector"],
    )
    await conn.copy_records_to_table(
        "bench_message",
        records=[(TENANT, principal, f"m{offset + i:07d}", t) for i, t in enumerate(texts)],
        columns=["tenant", "principal", "item_id", "body"],
    )


def any_term(question: str) -> str:
    words = [w for w in _WORD.findall(question.lower()) if w not in FUNCTION_WORDS]
    return " | ".join(words) or "nothing"


_LEXICAL = """
SELECT item_id, ts_rank(tsv, q) AS rank
FROM bench_message, to_tsquery('engram_english', $3) AS q
WHERE tenant = $1 AND principal = $2 AND tsv @@ q
ORDER BY rank DESC, item_id LIMIT 10
"""


async def measure_size(
    conn: asyncpg.Connection,
    embedder: WordLlamaEmbedder,
    gen: EmbeddingGeneration,
    texts: list[str],
    questions: list[str],
    size: int,
) -> dict[str, object]:
    await conn.execute("TRUNCATE embedding_vector, bench_message")
    target_texts = cycled(texts, size)
    target = embedder.embed_now([gen.prepare(t) for t in target_texts])
    await load_principal(conn, gen, PRINCIPAL, target_texts, target, 0)
    per_other = size // OTHERS
    for n in range(OTHERS):
        other_texts = target_texts[n * per_other : (n + 1) * per_other]
        await load_principal(
            conn, gen, f"other-{n:02d}", other_texts, target[n * per_other : (n + 1) * per_other], 0
        )
    await conn.execute("ANALYZE")
    asked = embedder.embed_now([gen.prepare(q) for q in questions])
    for q in asked[:5]:  # warm the cache and the plans
        await store.search(conn, TENANT, PRINCIPAL, "message", q)
    ids = [f"m{i:07d}" for i in range(size)]
    exact, both, memory, lexical = [], [], [], []
    for q in asked:
        started = time.perf_counter()
        found = await store.search(conn, TENANT, PRINCIPAL, "message", q)
        exact.append(time.perf_counter() - started)
        assert found.searched == size
    for question in questions:
        started = time.perf_counter()
        vector = (await embedder.embed([gen.prepare(question)]))[0]
        await store.search(conn, TENANT, PRINCIPAL, "message", vector)
        both.append(time.perf_counter() - started)
    for q in asked:
        started = time.perf_counter()
        store.rank(target, ids, q, 10)
        memory.append(time.perf_counter() - started)
    for question in questions:
        started = time.perf_counter()
        await conn.fetch(_LEXICAL, TENANT, PRINCIPAL, any_term(question))
        lexical.append(time.perf_counter() - started)
    table_mb = await conn.fetchval("SELECT pg_total_relation_size('embedding_vector') / 1e6")
    exact_p = percentiles(exact)
    return {
        "vectors_of_principal": size,
        "vectors_in_all": size + per_other * OTHERS,
        "vector_table_mb": round(float(table_mb), 1),
        "exact_search": exact_p,
        "embed_and_search": percentiles(both),
        "in_memory_scoring": percentiles(memory),
        "lexical_baseline": percentiles(lexical),
        "exact_meets_p99_target": exact_p["p99_ms"] < TARGET_P99_MS,
    }


async def main(
    turns: Path, qa: Path, sizes: list[int], embed: int, queries: int
) -> dict[str, object]:
    embedder = WordLlamaEmbedder(256)
    gen = EmbeddingGeneration.of(embedder.model)
    texts = read_texts(turns)
    questions = read_questions(qa, queries)
    report: dict[str, object] = {
        "generation": gen.name,
        "throughput_one_thread": throughput(embedder, gen, cycled(texts, embed)),
        "queries_per_size": len(questions),
        "target_p99_ms": TARGET_P99_MS,
    }
    admin = load_settings().database.url.get_secret_value()
    async with scratch_database(admin, "embsearch_") as url:
        conn = await asyncpg.connect(url)
        try:
            await conn.execute(
                "CREATE TABLE bench_message (tenant text, principal text, item_id text, "
                "body text, tsv tsvector GENERATED ALWAYS AS "
                "(to_tsvector('engram_english', body)) STORED)"
            )
            await conn.execute("CREATE INDEX ON bench_message USING gin (tsv)")
            await conn.execute("CREATE INDEX ON bench_message (tenant, principal)")
            await store.register(conn, gen)
            await store.mark_built(conn, gen.name)
            await store.activate(conn, gen.name)
            report["sizes"] = [
                await measure_size(conn, embedder, gen, texts, questions, size) for size in sizes
            ]
        finally:
            await conn.close()
    return report


if __name__ == "__main__":
    from engram.infra.logs import configure_logging

    configure_logging("warning")
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=Path, required=True)
    parser.add_argument("--qa", type=Path, required=True)
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000])
    parser.add_argument("--embed", type=int, default=20_000, help="messages for throughput")
    parser.add_argument("--queries", type=int, default=200)
    args = parser.parse_args()
    result = asyncio.run(main(args.turns, args.qa, args.sizes, args.embed, args.queries))
    sys.stdout.write(orjson.dumps(result, option=orjson.OPT_INDENT_2).decode() + "\n")
