"""How well the local default embedder finds the evidence of real questions: dense-only recall
over a principal's raw messages, next to a BM25 over the same messages, in one run.

Every message of every turn of ``--turns`` (both speakers) is a document of its principal; each
question of ``--qa`` with evidence is asked against its principal's documents only, and a hit is
a top-k message whose turn is one of the question's evidence events. Reported: evidence
recall@1/5/10 and MRR@10, over categories 1, 2 and 4 (the principal's own facts: multi-hop,
temporal, single-hop) and over all categories, for BM25 (k1 1.2, b 0.75, lower-cased word
tokens, English stop words dropped) and for WordLlama at 64, 128 and 256 dimensions under each
text recipe (projections/messages/embeddings/generation.py), plus the hybrid of BM25 and the default generation's
ranking by reciprocal rank fusion (k = 60) — a pointer for item 4 of issue 28, not its answer.
Pure CPU, no services.

    .venv/bin/python -m bench.embedding_quality \\
        --turns /work/shared/data/locomo-dev.jsonl --qa /work/shared/data/locomo-dev-qa.jsonl
"""

from __future__ import annotations

import argparse
import math
import re
import sys
import time
from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import orjson

from engram.projections.messages.embeddings.generation import (
    DEFAULT_RECIPE,
    FUNCTION_WORDS,
    RECIPES,
    EmbeddingGeneration,
)
from engram.projections.messages.embeddings.local import SIZES, WordLlamaEmbedder

OWN_FACTS = frozenset({1, 2, 4})
DEFAULT = EmbeddingGeneration("wordllama-l2_supercat", 256, DEFAULT_RECIPE)
KS = (1, 5, 10)
STOP = FUNCTION_WORDS  # BM25's stop list is the default recipe's, so both drop the same words
_WORD = re.compile(r"[a-z0-9]+")


@dataclass(frozen=True, slots=True)
class Doc:
    event_id: str
    text: str


@dataclass(frozen=True, slots=True)
class Question:
    principal: str
    text: str
    category: int
    evidence: frozenset[str]


def words(text: str) -> list[str]:
    return [w for w in _WORD.findall(text.lower()) if w not in STOP]


class BM25:
    """Okapi BM25 over one principal's documents."""

    def __init__(self, docs: Sequence[str], k1: float = 1.2, b: float = 0.75) -> None:
        self.tfs = [Counter(words(d)) for d in docs]
        self.lens = np.array([sum(tf.values()) for tf in self.tfs], dtype=np.float64)
        self.avg = float(self.lens.mean()) if len(docs) else 0.0
        df: Counter[str] = Counter()
        for tf in self.tfs:
            df.update(tf.keys())
        n = len(docs)
        self.idf = {w: math.log(1 + (n - c + 0.5) / (c + 0.5)) for w, c in df.items()}
        self.k1, self.b = k1, b

    def scores(self, query: str) -> np.ndarray:
        out = np.zeros(len(self.tfs))
        terms = [w for w in set(words(query)) if w in self.idf]
        for i, tf in enumerate(self.tfs):
            norm = self.k1 * (1 - self.b + self.b * self.lens[i] / self.avg)
            out[i] = sum(
                self.idf[w] * tf[w] * (self.k1 + 1) / (tf[w] + norm) for w in terms if w in tf
            )
        return out


def load(turns: Path, qa: Path) -> tuple[dict[str, list[Doc]], list[Question]]:
    docs: dict[str, list[Doc]] = defaultdict(list)
    for line in turns.read_bytes().splitlines():
        turn = orjson.loads(line)
        for message in turn["messages"]:
            docs[turn["principal"]].append(Doc(turn["event_id"], message["content"]))
    questions = []
    for line in qa.read_bytes().splitlines():
        q = orjson.loads(line)
        if q.get("evidence_event_ids"):
            questions.append(
                Question(
                    q["principal"],
                    q["question"],
                    int(q["category"]),
                    frozenset(q["evidence_event_ids"]),
                )
            )
    return docs, questions


def top10(scores: np.ndarray) -> list[int]:
    return [int(i) for i in np.argsort(-scores, kind="stable")[:10]]


def rrf(*rankings: list[int], k: int = 60) -> list[int]:
    fused: dict[int, float] = defaultdict(float)
    for ranking in rankings:
        for rank, doc in enumerate(ranking):
            fused[doc] += 1 / (k + rank + 1)
    return sorted(fused, key=lambda d: (-fused[d], d))[:10]


def tally(
    questions: Sequence[Question],
    docs: dict[str, list[Doc]],
    rankings: Sequence[list[int]],
) -> dict[str, dict[str, float]]:
    groups: dict[str, list[tuple[int | None]]] = {"own_facts_1_2_4": [], "all": []}
    for n, q in enumerate(questions):
        found = None
        for pos, i in enumerate(rankings[n]):
            if docs[q.principal][i].event_id in q.evidence:
                found = pos
                break
        groups["all"].append((found,))
        if q.category in OWN_FACTS:
            groups["own_facts_1_2_4"].append((found,))
    out = {}
    for name, hits in groups.items():
        row = {
            f"recall@{k}": sum(1 for (f,) in hits if f is not None and f < k) / len(hits)
            for k in KS
        }
        row["mrr@10"] = sum(1 / (f + 1) for (f,) in hits if f is not None) / len(hits)
        row["questions"] = len(hits)
        out[name] = {k: round(v, 3) for k, v in row.items()}
    return out


def main(turns: Path, qa: Path) -> dict[str, object]:
    docs, questions = load(turns, qa)
    bm25 = {p: BM25([d.text for d in ds]) for p, ds in docs.items()}
    lexical = [top10(bm25[q.principal].scores(q.text)) for q in questions]
    messages = sum(len(ds) for ds in docs.values())
    report: dict[str, object] = {
        "messages": messages,
        "principals": len(docs),
        "questions": len(questions),
        "bm25": tally(questions, docs, lexical),
    }
    best: list[list[int]] = []
    for size in SIZES:
        embedder = WordLlamaEmbedder(size)
        for recipe in RECIPES:
            generation = EmbeddingGeneration.of(embedder.model, recipe)
            started = time.process_time()
            matrices = {
                p: embedder.embed_now([generation.prepare(d.text) for d in ds])
                for p, ds in docs.items()
            }
            asked = embedder.embed_now([generation.prepare(q.text) for q in questions])
            cpu = time.process_time() - started
            ranked = [top10(matrices[q.principal] @ asked[n]) for n, q in enumerate(questions)]
            if generation.name == DEFAULT.name:
                best = ranked
            report[generation.name] = tally(questions, docs, ranked) | {
                "embed_cpu_ms_per_text": {
                    "mean": round(1000 * cpu / (messages + len(questions)), 4)
                }
            }
    report[f"rrf(bm25, {DEFAULT.name})"] = tally(
        questions, docs, [rrf(lexical[n], best[n]) for n in range(len(questions))]
    )
    return report


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--turns", type=Path, required=True)
    parser.add_argument("--qa", type=Path, required=True)
    args = parser.parse_args()
    sys.stdout.write(orjson.dumps(main(args.turns, args.qa), option=orjson.OPT_INDENT_2).decode())
    sys.stdout.write("\n")
