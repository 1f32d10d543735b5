"""CPU per claims batch of :func:`resolution.chunk.resolve_chunk` alone: no Kafka, no SQL.

Forms ``--turns`` synthetic turns (``bench/throughput.py``'s corpus) in process, groups the
batches by principal in log order, and resolves each principal's batches in chunks of
``--chunk`` from an empty :class:`~resolution.beliefs.BeliefState` that carries over from chunk to
chunk (what the projector would have loaded back). The formed batches are frozen out of the
collector first, as the projector freezes its start-up heap: without it a full collection
rescans them all and the spread between passes is larger than the differences measured.
Prints the median and every pass, CPU µs a batch; pair two checkouts by running each in turn.

    PYTHONPATH=. .venv/bin/python bench/resolve_cost.py [--turns 3000] [--passes 5]
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import statistics
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))  # this checkout's code, not an installed copy's

from bench.throughput import synthetic_turns  # noqa: E402
from engram.formation.policy import FormationPolicy  # noqa: E402
from engram.resolution.beliefs import BeliefState  # noqa: E402
from engram.resolution.chunk import resolve_chunk  # noqa: E402
from engram.schemas.claims import ClaimsBatchFormed, SourcePosition  # noqa: E402
from engram.streams.formation_stage import FormationStage  # noqa: E402


async def formed(turns: int) -> list[ClaimsBatchFormed]:
    """The bench turns' claims batches, formed by the core in log order."""
    stage = FormationStage(FormationPolicy())
    return [
        await stage.form(episode, SourcePosition(topic="bench", partition=0, offset=offset))
        for offset, episode in enumerate(synthetic_turns(turns, "bench"))
    ]


def by_principal(batches: list[ClaimsBatchFormed]) -> list[list[ClaimsBatchFormed]]:
    groups: dict[tuple[str, str], list[ClaimsBatchFormed]] = {}
    for batch in batches:
        groups.setdefault((batch.tenant, batch.principal), []).append(batch)
    return list(groups.values())


def resolve_all(groups: list[list[ClaimsBatchFormed]], chunk: int) -> float:
    """CPU seconds to resolve every principal's batches from nothing, chunk by chunk."""
    gc.collect()
    started = time.process_time()
    for group in groups:
        state = BeliefState()
        for start in range(0, len(group), chunk):
            resolve_chunk(state, group[start : start + chunk])
    return time.process_time() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=3000)
    parser.add_argument("--chunk", type=int, default=200)
    parser.add_argument("--passes", type=int, default=5)
    args = parser.parse_args()
    batches = asyncio.run(formed(args.turns))
    groups = by_principal(batches)
    gc.collect()
    gc.freeze()
    resolve_all(groups, args.chunk)  # warm-up: caches, lazily built tables
    passes = [1e6 * resolve_all(groups, args.chunk) / len(batches) for _ in range(args.passes)]
    print(
        f"resolve_chunk {statistics.median(passes):.1f} µs a batch (median of {args.passes}; "
        f"passes {', '.join(f'{p:.1f}' for p in passes)}), {len(batches)} batches"
    )


if __name__ == "__main__":
    main()
