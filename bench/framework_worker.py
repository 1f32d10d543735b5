"""The formation worker with its core's answers computed in advance: what the agent costs
around the core (faust, the backlog, the producer), measured in the same process and run.

bench/throughput.py starts this as a subprocess in place of `engram worker --no-projector`.
Before faust starts it forms every bench turn once and keeps the batches; the stage the worker
then runs only looks its batch up. So the rate of claims batches it publishes is the rate of the
framework alone, and 1/rate its cost per turn — without subtracting two rates measured in
different processes at different moments, which this noisy machine makes unreliable.

    python bench/framework_worker.py TENANT TURNS [PROFILE_PATH]
    (Kafka and the database from the environment; with a path, the worker runs under cProfile)
"""

from __future__ import annotations

import asyncio
import cProfile
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from bench.throughput import synthetic_turns  # noqa: E402
from engram.formation.policy import FormationPolicy  # noqa: E402
from engram.infra.logs import configure_logging  # noqa: E402
from engram.infra.settings import load_settings  # noqa: E402
from engram.schemas.claims import ClaimsBatchFormed, SourcePosition  # noqa: E402
from engram.schemas.log import LogEvent  # noqa: E402
from engram.streams.app import build_app, run_worker  # noqa: E402
from engram.streams.formation_stage import FormationStage  # noqa: E402


class PrecomputedStage(FormationStage):
    """Answers with the batch the real core formed for the same episode before the run. The
    batch's source position is the one the worker passes, as the real stage's would be: formed
    at the position the episode has on the bench's fresh one-partition topic, the batch is
    returned as it is (a copy only where the worker passes another position)."""

    def __init__(self, batches: dict[object, ClaimsBatchFormed]):
        super().__init__(FormationPolicy())
        self._batches = batches

    async def form(self, episode: LogEvent, source: SourcePosition) -> ClaimsBatchFormed:
        batch = self._batches[episode.event_id]
        return batch if batch.source == source else batch.model_copy(update={"source": source})


async def precompute(tenant: str, count: int, topic: str) -> dict[object, ClaimsBatchFormed]:
    """Each turn's batch, formed at the position the bench published it at (one partition,
    in order from offset 0)."""
    stage = FormationStage(FormationPolicy())
    batches: dict[object, ClaimsBatchFormed] = {}
    for offset, episode in enumerate(synthetic_turns(count, tenant=tenant)):
        source = SourcePosition(topic=topic, partition=0, offset=offset)
        batches[episode.event_id] = await stage.form(episode, source)
    return batches


def main() -> None:
    tenant, count = sys.argv[1], int(sys.argv[2])
    configure_logging("warning")
    settings = load_settings()
    batches = asyncio.run(precompute(tenant, count, settings.kafka.episodes_topic))
    streams = build_app(settings, PrecomputedStage(batches))
    if len(sys.argv) > 3:  # a path: profile the worker (not the precomputing) into it
        profile = cProfile.Profile()
        try:
            profile.runcall(run_worker, streams, loglevel="warning")
        finally:
            profile.dump_stats(sys.argv[3])
    else:
        run_worker(streams, loglevel="warning")


if __name__ == "__main__":
    main()
