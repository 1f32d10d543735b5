"""A question's embedding under load: N questions in flight at once through one process's
multilingual-e5-small, for each way of running the engine, alternated in one run.

Arms (``engram.projections.messages.embeddings.e5.E5Embedder``): ``every core`` (one engine, the
engine's default threads: every core), ``1 thread`` (one engine of one thread: calls queue for
it), ``1 thread, N engines`` (the default: one-thread engines, as many as cores). Each round
asks every arm the same ``--questions`` dev questions, ``--load`` at a time, the arms' order
reversed every other round; wall milliseconds per question, p50/p99.

    .venv/bin/python -m bench.embedding_load --qa /work/shared/data/locomo-dev-qa.jsonl --load 4
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import time
from pathlib import Path

import orjson

from bench.recall_scale import summary
from engram.evaluation.recall import load_questions
from engram.projections.messages.embeddings.e5 import E5Embedder


async def _round(embedder: E5Embedder, questions: list[str], load: int) -> list[float]:
    took: list[float] = []

    async def asker(mine: list[str]) -> None:
        for question in mine:
            started = time.perf_counter()
            await embedder.embed([question], "query")
            took.append((time.perf_counter() - started) * 1000)

    await asyncio.gather(*(asker(questions[k::load]) for k in range(load)))
    return took


async def main(qa: Path, questions: int, load: int, rounds: int) -> dict[str, object]:
    asked = [q.text for q in load_questions(qa)[:questions]]
    arms = {
        "every core": E5Embedder(None),
        "1 thread": E5Embedder(1, engines=1),
        "1 thread, engines = cores (default)": E5Embedder(1),
    }
    for embedder in arms.values():
        await _round(embedder, asked[:load], load)  # warm: the engines made, the pages mapped
    times: dict[str, list[float]] = {name: [] for name in arms}
    for round_ in range(rounds):
        order = list(arms) if round_ % 2 == 0 else list(arms)[::-1]
        for name in order:
            times[name] += await _round(arms[name], asked, load)
    return {
        "cores": os.cpu_count(),
        "in_flight": load,
        "questions": len(asked) * rounds,
        "load_average": os.getloadavg(),
        **{name: summary(values) for name, values in times.items()},
    }


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--qa", type=Path, required=True)
    parser.add_argument("--questions", type=int, default=80)
    parser.add_argument("--load", type=int, default=4)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    result = asyncio.run(main(args.qa, args.questions, args.load, args.rounds))
    sys.stdout.write(orjson.dumps(result, option=orjson.OPT_INDENT_2).decode() + "\n")
