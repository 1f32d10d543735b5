"""The cost of recall's second stage at 100k messages, against recall without it, in one run.

The messages are :mod:`bench.recall_scale`'s (the dev conversations' real text repeated with
fresh ids and times into a scratch database, postings and counts recounted; principals of 1k,
10k and 100k messages); the questions of ``--qa`` (the first ``--questions``) are asked of the
100k principal by words (no vectors: embedding 100k messages is not what is measured; the
second stage reads the first :data:`engram.projections.reads.rerank.TOP` candidates whatever
lists found them). For each question, in turn:

- ``stage``: :func:`engram.projections.reads.recall.second_stage` alone, after
  :func:`engram.projections.reads.recall.first_stage` (the answer's type read from the
  candidates' words, the linear model, the new order);
- ``recall_without``: the whole of :func:`engram.projections.reads.recall.recall`, first page
  of 10, ``reread=False`` (the baseline: the first stage's order);
- ``recall_with``: the same with the second stage (the default), the two alternating first.

Prints JSON: p50, p99, max and mean in milliseconds of each, and how many questions the second
stage changed the first page of.

    nice -n 10 .venv/bin/python -m bench.recall_rerank --turns /work/shared/data/locomo-dev.jsonl \\
        --qa /work/shared/data/locomo-dev-qa.jsonl --questions 200
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import sys
import time
from pathlib import Path

import asyncpg
import orjson

from bench.recall_scale import SIZES, TENANT, corpus, fill, principal, summary
from engram.evaluation.recall import load_questions, scratch_database
from engram.generations.reading import reading
from engram.infra.logs import configure_logging
from engram.infra.settings import load_settings
from engram.projections.reads.recall import (
    OWN_WORDS,
    first_stage,
    read_request,
    recall,
    second_stage,
)
from engram.projections.reads.recall_lists import Scope
from engram.projections.reads.search import UnsearchableQuery
from engram.schemas.api import RecallResults

WHO = principal(SIZES[-1])


async def stage_ms(conn: asyncpg.Connection, question: str) -> float | None:
    """The second stage's own time for ``question`` (None for a question with nothing to
    search by words)."""
    request = read_request(question, roles=OWN_WORDS, limit=10, cursor=None, asked_at=None)
    scope = Scope(TENANT, WHO, request.role_names, None)
    try:
        first = await first_stage(conn, request, scope, semantic=None)
    except UnsearchableQuery:
        return None
    started = time.perf_counter()
    second_stage(first, request.query)
    return (time.perf_counter() - started) * 1000


async def whole(conn: asyncpg.Connection, question: str, *, reread: bool) -> tuple[float, str]:
    """The whole recall's time and its first page's hits, in order."""
    started = time.perf_counter()
    found = RecallResults(hits=[], next_cursor=None, reflects=[])
    with contextlib.suppress(UnsearchableQuery):  # timed all the same
        found = await recall(
            conn, tenant=TENANT, principal=WHO, query=question, limit=10, reread=reread
        )
    took = (time.perf_counter() - started) * 1000
    return took, ",".join(h.model_dump_json(include={"event_id"}) for h in found.hits)


async def measure(pool: asyncpg.Pool, asked: list[str]) -> dict[str, object]:
    stage: list[float] = []
    without: list[float] = []
    with_stage: list[float] = []
    changed = 0
    for number, question in enumerate(asked):
        async with reading(pool, principal=(TENANT, WHO)) as conn:
            took = await stage_ms(conn, question)
            if took is not None:
                stage.append(took)
            order = (False, True) if number % 2 == 0 else (True, False)
            pages = {}
            for reread in order:
                ms, pages[reread] = await whole(conn, question, reread=reread)
                (with_stage if reread else without).append(ms)
            changed += pages[True] != pages[False]
    return {
        "stage": summary(stage),
        "recall_without": summary(without),
        "recall_with": summary(with_stage),
        "first_page_changed": changed,
    }


async def main(turns: Path, qa: Path, questions: int) -> dict[str, object]:
    texts = corpus(turns)
    asked = [q.text for q in load_questions(qa)[:questions]]
    admin = load_settings().database.url.get_secret_value()
    async with scratch_database(admin, prefix="recall_rerank_") as url:
        conn = await asyncpg.connect(url)
        try:
            fill_s = await fill(conn, texts, sum(SIZES))
            messages = await conn.fetchval("SELECT count(*) FROM message WHERE principal = $1", WHO)
        finally:
            await conn.close()
        pool = await asyncpg.create_pool(url, min_size=1, max_size=2)
        try:
            measured = await measure(pool, asked)
        finally:
            await pool.close()
    return {
        "principal_messages": messages,
        "fill_seconds": round(fill_s, 1),
        "questions": len(asked),
        **measured,
    }


if __name__ == "__main__":
    configure_logging("warning")  # stdout is the JSON report
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=Path, required=True)
    parser.add_argument("--qa", type=Path, required=True)
    parser.add_argument("--questions", type=int, default=200)
    args = parser.parse_args()
    result = asyncio.run(main(args.turns, args.qa, args.questions))
    sys.stdout.write(orjson.dumps(result, option=orjson.OPT_INDENT_2).decode() + "\n")
