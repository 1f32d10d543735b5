"""How recall's second stage's weights were chosen, and what they are worth on conversations
they never saw: a fit on the dev split and a leave-one-conversation-out estimate, in one run.

The conversations of ``--turns`` are formed, projected, indexed and embedded (the configured
embedder) into a scratch database as ``engram eval recall --turns`` does; each question of
``--qa`` of categories 1, 2 and 4 whose evidence holds the principal's own words is asked as of
the principal's last message through recall's own first stage
(:func:`engram.projections.reads.recall.first_stage`), and its first
:data:`engram.projections.reads.rerank.TOP` messages' :func:`engram.projections.reads.rerank.
features` are kept with whether each is an evidence message. Then:

- ``fitted``: a listwise logistic model (softmax over each question's candidates, the evidence
  messages its targets; L2 ``--l2``) fitted by gradient descent on every question — the weights
  :data:`engram.projections.reads.rerank.WEIGHTS` holds, rounded;
- ``held_out``: the same fit once per conversation on the others' questions, each question
  scored by the weights that never saw its conversation;
- ``first_stage``: no second stage.

Each is scored as recall serves it (the supported beliefs first,
:func:`engram.projections.reads.recall_beliefs.supported`, then the messages): evidence recall
@1, @5, @10, MRR and whether the first hit comes from a session holding an evidence message,
overall and per conversation. Prints JSON. Deterministic: the same data gives the same weights.

    nice -n 10 .venv/bin/python -m bench.recall_rerank_fit \\
        --turns /work/shared/data/locomo-dev.jsonl --qa /work/shared/data/locomo-dev-qa.jsonl
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

import asyncpg
import numpy as np
import orjson
from numpy.typing import NDArray

from engram.evaluation.recall import (
    OWN_WORDS_CATEGORIES,
    AskedAt,
    Question,
    form_into,
    load_questions,
    scratch_database,
)
from engram.generations.reading import reading
from engram.infra.logs import configure_logging
from engram.infra.settings import load_settings
from engram.ingest.jsonl import read_episodes
from engram.projections.messages.embeddings.wiring import embedder_from_settings
from engram.projections.reads.recall import (
    OWN_WORDS,
    first_stage,
    read_request,
    semantic_query,
)
from engram.projections.reads.recall_beliefs import SUPPORT_MESSAGES, quoted, supported
from engram.projections.reads.recall_lists import MessageId, Scope, messages_in_scope
from engram.projections.reads.rerank import FEATURES, TOP, asks_for, features
from engram.projections.reads.search import UnsearchableQuery
from engram.schemas.api import BeliefView

Matrix = NDArray[np.float64]


@dataclass
class Asked:
    """One question's first stage: its candidates' features and labels, and what scoring a
    new order needs (the messages' ids, the beliefs, which of their quotes are in scope)."""

    conversation: str
    evidence: frozenset[str]
    sessions: frozenset[str]
    features: Matrix
    labels: Matrix
    messages: list[MessageId]
    beliefs: list[BeliefView]
    scoped: set[MessageId]


async def gather(
    pool: asyncpg.Pool, questions: Sequence[Question], session_of: dict[str, str]
) -> list[Asked]:
    embedder = embedder_from_settings(load_settings().embedding)
    dates = AskedAt(pool, at_end=True)
    asked = []
    for question in questions:
        question = replace(question, asked_at=await dates.of(question))
        who = (question.tenant, question.principal)
        async with reading(pool, principal=who) as conn:
            semantic = await semantic_query(conn, embedder, question.text)
            request = read_request(
                question.text, roles=OWN_WORDS, limit=10, cursor=None, asked_at=question.asked_at
            )
            scope = Scope(question.tenant, question.principal, request.role_names, None)
            try:
                first = await first_stage(conn, request, scope, semantic=semantic)
            except UnsearchableQuery:
                continue
            in_scope = await messages_in_scope(conn, quoted(first.beliefs), scope)
        head = [m for m, _ in first.messages[:TOP]]
        asks = asks_for(request.query)
        rows = [
            features(first.candidates.rows[m]["content"], rank, asks)
            for rank, m in enumerate(head, start=1)
        ]
        asked.append(
            Asked(
                conversation=question.principal.split("-")[1],
                evidence=question.evidence,
                sessions=frozenset(session_of.get(e, "") for e in question.evidence),
                features=np.array(rows, dtype=np.float64).reshape(len(head), len(FEATURES)),
                labels=np.array([str(m[0]) in question.evidence for m in head], dtype=np.float64),
                messages=[m for m, _ in first.messages],
                beliefs=first.beliefs,
                scoped={(r["episode_id"], r["message_ordinal"]) for r in in_scope},
            )
        )
    return asked


def fit(asked: Sequence[Asked], l2: float, steps: int = 1500, rate: float = 0.5) -> Matrix:
    """The listwise logistic model's weights: gradient descent from zero (the objective is
    convex), over the questions with an evidence message among their candidates."""
    lists = [(a.features, a.labels) for a in asked if a.labels.any()]
    weights = np.zeros(len(FEATURES))
    for _ in range(steps):
        gradient = np.zeros_like(weights)
        for x, y in lists:
            scores = x @ weights
            exp = np.exp(scores - scores.max())
            predicted = exp / exp.sum()
            wanted = y * exp / (y * exp).sum()
            gradient += x.T @ (predicted - wanted)
        weights -= rate * (gradient / len(lists) + l2 * weights)
    return weights


def reordered(a: Asked, weights: Matrix | None) -> list[MessageId]:
    if weights is None or not len(a.features):
        return a.messages
    scores = a.features @ weights
    head = sorted(range(len(scores)), key=lambda i: (-scores[i], i))
    return [a.messages[i] for i in head] + a.messages[len(head) :]


def served(a: Asked, messages: list[MessageId]) -> list[tuple[frozenset[str], str]]:
    """The first page as recall serves it: per hit, its evidence events and a session."""
    beliefs = supported(a.beliefs, messages[:SUPPORT_MESSAGES], a.scoped)
    hits = [(frozenset(str(e.episode_id) for e in b.evidence), "belief") for b in beliefs]
    return (hits + [(frozenset({str(m[0])}), "message") for m in messages])[:10]


def score(
    asked: Sequence[Asked],
    weights_of: Callable[[Asked], Matrix | None],
    session_of: dict[str, str],
) -> dict[str, float]:
    ranks: list[int | None] = []
    session_first = 0
    for a in asked:
        page = served(a, reordered(a, weights_of(a)))
        ranks.append(next((i for i, (h, _) in enumerate(page, 1) if h & a.evidence), None))
        session_first += bool(page) and any(session_of.get(e) in a.sessions for e in page[0][0])
    n = len(ranks) or 1
    result = {
        f"at_{k}": round(sum(r is not None and r <= k for r in ranks) / n, 3) for k in (1, 5, 10)
    }
    result["mrr"] = round(sum(1 / r for r in ranks if r) / n, 3)
    result["session_first"] = round(session_first / n, 3)
    result["questions"] = len(ranks)
    return result


async def asked_of(url: str, questions: Sequence[Question], turns: Path) -> list[Asked]:
    session_of = {str(e.event_id): e.session for e in read_episodes(turns)}
    pool = await asyncpg.create_pool(url, min_size=1, max_size=2)
    try:
        return await gather(pool, questions, session_of)
    finally:
        await pool.close()


async def main(turns: Path, qa: Path, l2: float, formed: str | None) -> dict[str, object]:
    questions = [
        q
        for q in load_questions(qa)
        if q.category in OWN_WORDS_CATEGORIES and q.own_evidence and q.evidence
    ]
    session_of = {str(e.event_id): e.session for e in read_episodes(turns)}
    settings = load_settings()
    if formed is not None:
        asked = await asked_of(formed, questions, turns)
    else:
        admin = settings.database.url.get_secret_value()
        async with scratch_database(admin, "rerank_fit_") as url:
            conn = await asyncpg.connect(url)
            try:
                await form_into(conn, turns, embedder_from_settings(settings.embedding))
                await conn.execute("ANALYZE")
            finally:
                await conn.close()
            asked = await asked_of(url, questions, turns)
    conversations = sorted({a.conversation for a in asked})
    fitted = fit(asked, l2)
    held = {c: fit([a for a in asked if a.conversation != c], l2) for c in conversations}

    def unfitted(a: Asked) -> Matrix | None:
        return None

    def held_out(a: Asked) -> Matrix | None:
        return held[a.conversation]

    per = {
        c: {
            "first_stage": score([a for a in asked if a.conversation == c], unfitted, session_of),
            "held_out": score([a for a in asked if a.conversation == c], held_out, session_of),
        }
        for c in conversations
    }
    return {
        "l2": l2,
        "top": TOP,
        "weights": dict(zip(FEATURES, (round(float(w), 3) for w in fitted), strict=True)),
        "first_stage": score(asked, unfitted, session_of),
        "fitted_on_all": score(asked, lambda a: fitted, session_of),
        "held_out": score(asked, held_out, session_of),
        "per_conversation": per,
    }


if __name__ == "__main__":
    configure_logging("warning")  # stdout is the JSON report
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=Path, required=True)
    parser.add_argument("--qa", type=Path, required=True)
    parser.add_argument("--l2", type=float, default=0.003)
    parser.add_argument(
        "--formed",
        metavar="URL",
        help="a database where --turns is already formed, indexed and embedded (as this bench "
        "or `engram eval recall --turns` forms it): asked as it stands, not formed again",
    )
    args = parser.parse_args()
    result = asyncio.run(main(args.turns, args.qa, args.l2, args.formed))
    sys.stdout.write(orjson.dumps(result, option=orjson.OPT_INDENT_2).decode() + "\n")
