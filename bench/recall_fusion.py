"""How much weight recall's semantic list should have: ``engram eval recall`` over the same
scratch database at several weights of the semantic list, in one run.

The conversations of ``--turns`` are formed, projected, indexed and embedded once (the
configured embedder, ``ENGRAM_EMBEDDING_*``: the local default unless set; the embedding
follower's own store) into a scratch database, exactly as
``engram eval recall --turns`` does; then every question of ``--qa`` is asked through
:func:`engram.projections.reads.recall.recall` with the semantic list fused at each weight of ``--weights``
(weight 0: the lexical lists only, the same ranking as without embeddings). Each pass also
reports BM25 over the principal's own messages and dense-only, computed on the same messages.
Recall@k does not depend on the machine's load (latency does; read latencies as ratios within
the run). Prints JSON: per weight, the categories 1, 2, 4 group whose evidence is the
principal's own words, and all questions.

    .venv/bin/python -m bench.recall_fusion \\
        --turns /work/shared/data/locomo-dev.jsonl --qa /work/shared/data/locomo-dev-qa.jsonl
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import time
from pathlib import Path

import asyncpg
import orjson

from engram.evaluation.recall import form_into, load_questions, measure, scratch_database
from engram.infra.settings import load_settings
from engram.projections.messages.embeddings.wiring import embedder_from_settings

GROUPS = ("own_words_1_2_4", "all")


async def run(turns: Path, qa: Path, weights: list[float]) -> dict[str, object]:
    questions = load_questions(qa)
    settings = load_settings()
    embedder = embedder_from_settings(settings.embedding)
    admin = settings.database.url.get_secret_value()
    model = embedder.model
    result: dict[str, object] = {"embedder": f"{model.name}/{model.dimensions}/{model.recipe}"}
    async with scratch_database(admin, prefix="recall_fusion_") as url:
        conn = await asyncpg.connect(url)
        try:
            started = time.perf_counter()
            _, messages = await form_into(conn, turns, embedder)
            result["formed_and_embedded_s"] = round(time.perf_counter() - started, 1)
            await conn.execute("ANALYZE")
        finally:
            await conn.close()
        result["messages"] = messages
        pool = await asyncpg.create_pool(url, min_size=1, max_size=2)
        try:
            passes: dict[str, object] = {}
            for weight in weights:
                report = (
                    await measure(pool, questions, embedder, semantic_weight=weight)
                ).to_dict()
                passes[f"{weight:g}"] = {
                    ranker: {g: report[ranker][g] for g in GROUPS}  # type: ignore[index]
                    for ranker in (
                        "recall",
                        "recall_lexical_only",
                        "bm25_own_messages",
                        "dense_own_messages",
                    )
                }
            result["by_semantic_weight"] = passes
        finally:
            await pool.close()
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--turns", type=Path, required=True)
    parser.add_argument("--qa", type=Path, required=True)
    parser.add_argument("--weights", default="0,0.25,0.5,1")
    args = parser.parse_args()
    weights = [float(w) for w in args.weights.split(",")]
    report = asyncio.run(run(args.turns, args.qa, weights))
    sys.stdout.write(orjson.dumps(report, option=orjson.OPT_INDENT_2).decode() + "\n")


if __name__ == "__main__":
    main()
