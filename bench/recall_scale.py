"""Recall latency at scale: principals with 1k, 10k and 100k messages in an index of 1M; recall's
lexical list as main ranked it before migration 0027 (the baseline) against the postings, in the
same run, on the same data.

The messages are the dev conversations' real text (every message of ``--turns``, both roles),
repeated with fresh ids and times, written straight into ``message`` of a scratch database by
one ``INSERT … SELECT`` per 100k rows; then the postings and counts are computed from them as
the indexer's writes compute them (:func:`engram.projections.messages.store.recount_stats`). The other
principals share the rest. Then the questions of ``--qa`` (the first ``--questions``) are
asked of each measured principal, one at a time (the rate this bench offers: one question in
flight), and for each question and principal, in turn:

- ``before``: the lexical list as recall computed it at 4257140 (:data:`BEFORE_WEIGHTS`, then
  :data:`BEFORE_MESSAGES`: each term's document frequency counted over the principal's
  messages, every message holding any term scored from its vector);
- ``after``: :func:`engram.projections.messages.lexical.question_statistics` and
  :func:`engram.projections.messages.lexical.best_messages` (counts looked up, postings summed);
- ``recall``: the whole of :func:`engram.projections.reads.recall.recall` — the code of ``GET /v1/recall``,
  first page of 10.

Prints JSON: p50, p99 and max in milliseconds of each, per principal, the ratios after/before,
how many of the 10 best messages the two lists share (they differ where the budget leaves the
commonest terms out and in BM25's average length: the scope's now, the matching messages'
before), and how many lists were exact. With ``--budgets``, the 100k principal's list is also
timed under each budget of postings given, against the exhaustive list of the same question.

    .venv/bin/python -m bench.recall_scale --turns /work/shared/data/locomo-dev.jsonl \\
        --qa /work/shared/data/locomo-dev-qa.jsonl --total 1000000 --budgets 40000 20000 10000
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import statistics
import sys
import time
from collections.abc import Awaitable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypeVar

import asyncpg
import orjson

from engram.evaluation.recall import load_questions, percentile, scratch_database
from engram.generations.reading import reading
from engram.infra.logs import configure_logging
from engram.infra.settings import load_settings
from engram.ingest.jsonl import read_episodes
from engram.projections.messages.lexical import (
    BM25_B,
    BM25_K1,
    MAX_SCORED,
    best_messages,
    question_statistics,
)
from engram.projections.messages.store import recount_stats
from engram.projections.reads.recall import recall
from engram.projections.reads.search import UnsearchableQuery, question_words
from engram.schemas.episodes import episode_messages

TENANT = "bench"
SIZES = (1_000, 10_000, 100_000)
T = TypeVar("T")
STEP = 100_000

_CORPUS = "CREATE TABLE corpus (n integer PRIMARY KEY, content text NOT NULL)"

_FILL = """
INSERT INTO message (tenant, principal, project, session, episode_id, message_ordinal, role,
                     author, content, occurred_at, source_partition, source_offset)
SELECT $1, CASE WHEN $4::int > 0 THEN $2 || (g % $4) ELSE $2 END, 'p', 's' || (g / 100),
       md5($2 || g)::uuid, 0, 'user', NULL, c.content,
       timestamptz '2026-01-01' + g * interval '30 seconds', 0, g
FROM generate_series($3::bigint, $3::bigint + $5 - 1) AS g
JOIN corpus c ON c.n = g % $6
"""
"""Rows ``$3 .. $3 + $5 - 1`` for principal ``$2`` (or ``$2`` plus one of ``$4`` suffixes),
text cycling through the ``$6`` corpus messages."""


BEFORE_WEIGHTS = """
WITH lexemes AS (
    SELECT DISTINCT v.lexeme
    FROM unnest(to_tsvector('engram_english', array_to_string($3::text[], ' '))) AS v
), scope AS (
    SELECT count(*)::float8 AS n FROM message
    WHERE tenant = $1 AND principal = $2 AND role = ANY($4::text[])
      AND ($5::text IS NULL OR project = $5)
)
SELECT l.lexeme, ln(1 + (scope.n - d.df + 0.5) / (d.df + 0.5)) AS idf
FROM lexemes l, scope, LATERAL (
    SELECT count(*)::float8 AS df FROM message m
    WHERE m.tenant = $1 AND m.principal = $2 AND m.role = ANY($4::text[])
      AND ($5::text IS NULL OR m.project = $5)
      AND m.search_vector @@ quote_literal(l.lexeme)::tsquery
) d
ORDER BY l.lexeme
"""
"""Recall's term weights at 4257140 (``projections/reads/recall.py``'s ``_WEIGHTS``), verbatim."""

BEFORE_MESSAGES = """
WITH weighted AS (
    SELECT * FROM unnest($3::text[], $9::float8[]) AS w(lexeme, idf)
), query AS (
    SELECT string_agg(quote_literal(lexeme), ' | ')::tsquery AS q FROM weighted
), matched AS (
    SELECT m.project, m.session, m.episode_id, m.message_ordinal, m.role, m.author, m.content,
           m.occurred_at, m.source_partition, m.source_offset, m.search_vector,
           (SELECT coalesce(sum(cardinality(v.positions)), 0) FROM unnest(m.search_vector) v)
               ::float8 AS dl
    FROM message m, query
    WHERE m.tenant = $1 AND m.principal = $2 AND m.role = ANY($4::text[])
      AND ($5::text IS NULL OR m.project = $5) AND m.search_vector @@ query.q
), normalised AS (
    SELECT matched.*, greatest(avg(dl) OVER (), 1) AS avgdl FROM matched
)
SELECT n.project, n.session, n.episode_id, n.message_ordinal, n.role, n.author, n.content,
       n.occurred_at, n.source_partition, n.source_offset,
       (SELECT sum(w.idf * greatest(cardinality(v.positions), 1) * ($7::float8 + 1)
                   / (greatest(cardinality(v.positions), 1)
                      + $7 * (1 - $8::float8 + $8 * n.dl / n.avgdl)))
        FROM unnest(n.search_vector) v JOIN weighted w ON w.lexeme = v.lexeme) AS score
FROM normalised n
ORDER BY score DESC, n.source_offset DESC, n.episode_id, n.message_ordinal
LIMIT $6
"""
"""Recall's lexical list at 4257140 (``projections/reads/recall.py``'s ``_MESSAGES``), verbatim."""

LIST = 100
"""How long a lexical list recall asks for (``engram.projections.reads.recall.CANDIDATES``)."""

MessageKey = tuple[object, int]


def corpus(turns: Path) -> list[str]:
    return [m.content for e in read_episodes(turns) for m in episode_messages(e)]


async def fill(conn: asyncpg.Connection, texts: list[str], total: int) -> float:
    """Write the messages and their postings and counts; seconds it took."""
    await conn.execute(_CORPUS)
    await conn.copy_records_to_table("corpus", records=list(enumerate(texts)))
    started = time.perf_counter()
    plan = [(principal(size), 0, size) for size in SIZES]
    others = total - sum(SIZES)
    if others > 0:
        plan.append(("other-", max(others // 1_000, 1), others))
    first = 0
    for name, spread, count in plan:
        for start in range(0, count, STEP):
            size = min(STEP, count - start)
            await conn.execute(_FILL, TENANT, name, first + start, spread, size, len(texts))
        first += count
    await recount_stats(conn)
    await conn.execute("VACUUM ANALYZE")
    return time.perf_counter() - started


def principal(size: int) -> str:
    return f"p{size}"


async def before(conn: asyncpg.Connection, who: str, question: str) -> list[MessageKey]:
    words = question_words(question, who)
    weights = await conn.fetch(BEFORE_WEIGHTS, TENANT, who, words, ["user"], None)
    rows = await conn.fetch(
        BEFORE_MESSAGES,
        TENANT,
        who,
        [r["lexeme"] for r in weights],
        ["user"],
        None,
        LIST,
        BM25_K1,
        BM25_B,
        [r["idf"] for r in weights],
    )
    return [(r["episode_id"], r["message_ordinal"]) for r in rows]


async def after(
    conn: asyncpg.Connection, who: str, question: str, budget: int = MAX_SCORED
) -> tuple[list[MessageKey], bool]:
    stats = await question_statistics(
        conn,
        tenant=TENANT,
        principal=who,
        words=question_words(question, who),
        roles=["user"],
        project=None,
    )
    ranked = await best_messages(
        conn,
        stats,
        tenant=TENANT,
        principal=who,
        roles=["user"],
        project=None,
        limit=LIST,
        budget=budget,
    )
    return [(r["episode_id"], r["message_ordinal"]) for r in ranked.rows], ranked.exact


async def whole(pool: asyncpg.Pool, who: str, question: str) -> None:
    async with reading(pool, principal=(TENANT, who)) as conn:
        with contextlib.suppress(UnsearchableQuery):  # timed all the same
            await recall(conn, tenant=TENANT, principal=who, query=question, limit=10)


def summary(values: list[float]) -> dict[str, float]:
    return {
        "p50_ms": round(percentile(values, 0.50), 2),
        "p99_ms": round(percentile(values, 0.99), 2),
        "max_ms": round(max(values), 2),
        "mean_ms": round(statistics.fmean(values), 2),
    }


@dataclass
class Measured:
    """One principal's timings (ms) and how the two lists compare."""

    before: list[float] = field(default_factory=list)
    after: list[float] = field(default_factory=list)
    recall: list[float] = field(default_factory=list)
    shared_top10: list[int] = field(default_factory=list)
    exact: int = 0

    def report(self) -> dict[str, object]:
        b, a = summary(self.before), summary(self.after)
        return {
            "before": b,
            "after": a,
            "recall": summary(self.recall),
            "after_over_before": {
                "p50": round(a["p50_ms"] / b["p50_ms"], 3),
                "p99": round(a["p99_ms"] / b["p99_ms"], 3),
            },
            "top10_shared_mean": round(statistics.fmean(self.shared_top10), 2),
            "top10_identical": sum(1 for n in self.shared_top10 if n == 10),
            "lists_exact": self.exact,
        }


async def timed(call: Awaitable[T]) -> tuple[T, float]:
    started = time.perf_counter()
    result = await call
    return result, (time.perf_counter() - started) * 1000


async def measure(pool: asyncpg.Pool, asked: list[str]) -> dict[int, Measured]:
    measured = {size: Measured() for size in SIZES}
    for question in asked:
        for size in SIZES:
            who, m = principal(size), measured[size]
            async with pool.acquire() as conn:
                if not question_words(question, who):
                    continue
                old, old_ms = await timed(before(conn, who, question))
                (new, exact), new_ms = await timed(after(conn, who, question))
            _, recall_ms = await timed(whole(pool, who, question))
            m.before.append(old_ms)
            m.after.append(new_ms)
            m.recall.append(recall_ms)
            m.shared_top10.append(len(set(old[:10]) & set(new[:10])))
            m.exact += exact
    return measured


async def budgets(pool: asyncpg.Pool, asked: list[str], tried: list[int]) -> dict[str, object]:
    """The largest principal's lexical list under each budget of postings in ``tried``,
    alternating per question: its timing, how often it is exhaustive, and how many of the
    exhaustive list's 10 best it keeps."""
    who = principal(SIZES[-1])
    times: dict[int, list[float]] = {b: [] for b in tried}
    kept: dict[int, list[int]] = {b: [] for b in tried}
    exact: dict[int, int] = dict.fromkeys(tried, 0)
    async with pool.acquire() as conn:
        for question in asked:
            if not question_words(question, who):
                continue
            whole_list, _ = await after(conn, who, question, budget=10**12)
            for budget in tried:
                (listed, is_exact), ms = await timed(after(conn, who, question, budget))
                times[budget].append(ms)
                kept[budget].append(len(set(listed[:10]) & set(whole_list[:10])))
                exact[budget] += is_exact
    return {
        str(b): summary(times[b])
        | {"exact": exact[b], "top10_kept_mean": round(statistics.fmean(kept[b]), 2)}
        for b in tried
    }


async def main(
    turns: Path, qa: Path, total: int, questions: int, tried: list[int]
) -> dict[str, object]:
    texts = corpus(turns)
    asked = [q.text for q in load_questions(qa)[:questions]]
    admin = load_settings().database.url.get_secret_value()
    async with scratch_database(admin) as url:
        conn = await asyncpg.connect(url)
        try:
            fill_s = await fill(conn, texts, total)
            rows = await conn.fetchval("SELECT count(*) FROM message")
            postings = await conn.fetchval("SELECT count(*) FROM message_term")
        finally:
            await conn.close()
        pool = await asyncpg.create_pool(url, min_size=1, max_size=2)
        try:
            measured = await measure(pool, asked)
            by_budget = await budgets(pool, asked, tried) if tried else {}
        finally:
            await pool.close()
    return {
        "messages": rows,
        "postings": postings,
        "fill_seconds": round(fill_s, 1),
        "questions": len(asked),
        "principals": {str(size): measured[size].report() for size in SIZES},
        "budgets_at_largest": by_budget,
    }


if __name__ == "__main__":
    configure_logging("warning")  # stdout is the JSON report
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=Path, required=True)
    parser.add_argument("--qa", type=Path, required=True)
    parser.add_argument("--total", type=int, default=1_000_000)
    parser.add_argument("--questions", type=int, default=200)
    parser.add_argument(
        "--budgets", type=int, nargs="*", default=[], help="postings budgets to compare at 100k"
    )
    args = parser.parse_args()
    result = asyncio.run(main(args.turns, args.qa, args.total, args.questions, args.budgets))
    sys.stdout.write(orjson.dumps(result, option=orjson.OPT_INDENT_2).decode() + "\n")
