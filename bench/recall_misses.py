"""Why recall misses: for the questions recall's measure counts (categories 1, 2 and 4 whose
evidence holds the principal's own words), where the evidence is and what could find it.

The dev conversations are formed, projected and indexed into a scratch database as
``engram eval recall --turns`` does; each question is asked through
:func:`engram.projections.reads.recall.recall` (first page of 10). Then, against the index itself:

- **indexed**: an evidence message is in the index among the principal's own words (the scope
  recall searches) — the ceiling of any ranking over the index (an oracle's recall@10);
- **shares a term**: an evidence message holds a term of the question (the ``engram_english``
  lexemes of :func:`engram.projections.reads.search.question_words`) — the ceiling of any lexical ranking;
- **lexical rank**: the first evidence message's rank in the exhaustive BM25 list of the
  principal's own words (:func:`engram.projections.messages.lexical.best_messages`, unbounded).

- **dense**: whether a WordLlama 256 embedding generation (the light option,
  ``content-words-v1``, exact cosine over the principal's own indexed messages) puts an
  evidence message in its top 10 — what the semantic list being wired in could add.

Prints JSON: how many questions, how many recall finds in its top 10, the two ceilings, the
misses by cause (not indexed; no shared term; shared, but BM25 ranks the evidence in its top 10
and fusion with the beliefs pushed it out, or ranks it 11-100 (the depth recall fuses), or
past 100), and of each cause how many the dense top 10 holds.

    .venv/bin/python -m bench.recall_misses --turns /work/shared/data/locomo-dev.jsonl \\
        --qa /work/shared/data/locomo-dev-qa.jsonl
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from collections import Counter
from pathlib import Path

import asyncpg
import numpy as np
import orjson

from engram.evaluation.recall import (
    OWN_WORDS_CATEGORIES,
    TOP,
    Question,
    first_rank,
    form_into,
    held,
    load_questions,
    scratch_database,
)
from engram.infra.logs import configure_logging
from engram.infra.settings import load_settings
from engram.projections.messages.embeddings.generation import EmbeddingGeneration
from engram.projections.messages.embeddings.local import WordLlamaEmbedder
from engram.projections.messages.lexical import best_messages, question_statistics
from engram.projections.reads.recall import recall
from engram.projections.reads.search import UnsearchableQuery, question_words

EVERY = 100_000
"""A list long enough to hold every message of a dev principal."""

_EVIDENCE = """
SELECT array_agg(DISTINCT v.lexeme) FILTER (WHERE v.lexeme = ANY($4::text[])) AS shared,
       count(DISTINCT m.episode_id) AS indexed
FROM message m, unnest(m.search_vector) v
WHERE m.tenant = $1 AND m.principal = $2 AND m.role = 'user'
  AND m.episode_id::text = ANY($3::text[])
"""
"""Of the question's evidence messages in the index (own words): the question's terms they
hold, and how many there are."""


class Dense:
    """Exact cosine over each principal's own indexed messages, by WordLlama 256."""

    def __init__(self) -> None:
        self._embedder = WordLlamaEmbedder()
        self._generation = EmbeddingGeneration.of(self._embedder.model)
        self._built: dict[tuple[str, str], tuple[np.ndarray, list[str]]] = {}

    async def top10(self, conn: asyncpg.Connection, question: Question) -> list[frozenset[str]]:
        who = (question.tenant, question.principal)
        if who not in self._built:
            rows = await conn.fetch(
                "SELECT episode_id::text AS event, content FROM message "
                "WHERE tenant = $1 AND principal = $2 AND role = 'user' "
                "ORDER BY source_offset, message_ordinal",
                *who,
            )
            texts = [self._generation.prepare(r["content"]) for r in rows]
            self._built[who] = (self._embedder.embed_now(texts), [r["event"] for r in rows])
        matrix, events = self._built[who]
        asked = self._embedder.embed_now([self._generation.prepare(question.text)])[0]
        best = np.argsort(-(matrix @ asked), kind="stable")[:TOP]
        return [frozenset({events[i]}) for i in best]


async def explain(conn: asyncpg.Connection, question: Question) -> str:
    """Why ``question``'s evidence is where it is: 'found', 'not indexed', 'no shared term',
    'lexical 1-10', 'lexical 11-100' or 'lexical past 100'."""
    who = (question.tenant, question.principal)
    try:
        results = await recall(
            conn, tenant=who[0], principal=who[1], query=question.text, limit=TOP
        )
        found = first_rank(held(results), question.evidence) is not None
    except UnsearchableQuery:
        found = False
    if found:
        return "found"
    stats = await question_statistics(
        conn,
        tenant=who[0],
        principal=who[1],
        words=question_words(question.text, who[1]),
        roles=["user"],
        project=None,
    )
    row = await conn.fetchrow(
        _EVIDENCE, *who, sorted(question.evidence), [t.lexeme for t in stats.terms]
    )
    if not row["indexed"]:
        return "not indexed"
    if not row["shared"]:
        return "no shared term"
    ranked = await best_messages(
        conn,
        stats,
        tenant=who[0],
        principal=who[1],
        roles=["user"],
        project=None,
        limit=EVERY,
        budget=EVERY,
    )
    ids = [frozenset({str(r["episode_id"])}) for r in ranked.rows]
    rank = first_rank(ids, question.evidence) if ids else None
    if rank is None or rank > 100:
        return "lexical past 100"
    return "lexical 1-10" if rank <= TOP else "lexical 11-100"


async def main(turns: Path, qa: Path) -> dict[str, object]:
    questions = [
        q for q in load_questions(qa) if q.category in OWN_WORDS_CATEGORIES and q.own_evidence
    ]
    admin = load_settings().database.url.get_secret_value()
    causes: Counter[str] = Counter()
    dense_found: Counter[str] = Counter()
    dense = Dense()
    async with scratch_database(admin) as url:
        conn = await asyncpg.connect(url)
        try:
            await form_into(conn, turns)
            await conn.execute("ANALYZE")
            for question in questions:
                cause = await explain(conn, question)
                causes[cause] += 1
                near = await dense.top10(conn, question)
                dense_found[cause] += first_rank(near, question.evidence) is not None
        finally:
            await conn.close()
    n = len(questions)
    misses = n - causes["found"]
    indexed = n - causes["not indexed"]
    sharing = indexed - causes["no shared term"]
    return {
        "questions": n,
        "recall_at_10": round(causes["found"] / n, 4),
        "oracle_over_the_index_at_10": round(indexed / n, 4),
        "lexical_ceiling_at_10": round(sharing / n, 4),
        "misses": misses,
        "misses_by_cause": dict(sorted(causes.items())),
        "misses_sharing_no_term": round(causes["no shared term"] / misses, 4) if misses else 0,
        "dense_at_10": round(sum(dense_found.values()) / n, 4),
        "dense_top10_holds_by_cause": dict(sorted(dense_found.items())),
        "recall_or_dense_at_10": round(
            (causes["found"] + sum(v for k, v in dense_found.items() if k != "found")) / n, 4
        ),
    }


if __name__ == "__main__":
    configure_logging("warning")  # stdout is the JSON report
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=Path, required=True)
    parser.add_argument("--qa", type=Path, required=True)
    args = parser.parse_args()
    result = asyncio.run(main(args.turns, args.qa))
    sys.stdout.write(orjson.dumps(result, option=orjson.OPT_INDENT_2).decode() + "\n")
