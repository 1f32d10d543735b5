"""The belief projector alone: claims batches/s, next to a raw consume of the same topic.

Forms ``--turns`` synthetic turns with the formation core in process (no Kafka), publishes their
claims batches to a fresh claims topic, then measures in the same run:

  (raw)        aiokafka consume of that topic + asyncpg COPY of the raw bytes: the floor of what
               any consumer writing to PostgreSQL can do here;
  (projector)  the real BeliefProjector over the same records into a fresh, migrated database:
               decode, load the chunk's rows, resolve in memory, set-based writes, offsets.

Prints JSON; the ratio is what to compare across machines.

    .venv/bin/python -m bench.projector --turns 3000 [--profile .dev/projector.prof] [--statements]
        [--phases] [--partitions 2] [--lanes 2] [--max-chunk 500]
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import io
import pstats
import secrets
import sys
from collections.abc import Awaitable
from contextlib import AbstractContextManager, nullcontext
from pathlib import Path

import orjson
from aiokafka import AIOKafkaProducer

from bench.projector_phases import with_phases
from bench.statement_timing import Tally, report, timed_statements
from bench.throughput import ProjectorRun, fresh, measure_projector, measure_raw, synthetic_turns
from engram.infra.settings import KafkaSettings, load_settings
from engram.policies.in_force import default_policy
from engram.projections.beliefs.projector import DEFAULT_LANES, DEFAULT_MAX_CHUNK
from engram.schemas.claims import ClaimsBatchFormed, SourcePosition
from engram.schemas.common import principal_key
from engram.streams.formation_stage import FormationStage


async def form_batches(count: int, tenant: str) -> list[ClaimsBatchFormed]:
    stage = FormationStage(default_policy())
    return [
        await stage.form(turn, SourcePosition(topic="bench.episodes", partition=0, offset=i))
        for i, turn in enumerate(synthetic_turns(count, tenant=tenant))
    ]


async def publish(kafka: KafkaSettings, batches: list[ClaimsBatchFormed]) -> None:
    producer = AIOKafkaProducer(bootstrap_servers=kafka.bootstrap, linger_ms=5)
    await producer.start()
    try:
        sent = [
            await producer.send(
                kafka.claims_topic,
                orjson.dumps(b.model_dump(mode="json")),
                key=principal_key(b.tenant, b.principal),
            )
            for b in batches
        ]
        await asyncio.gather(*sent)
    finally:
        await producer.stop()


async def main(
    count: int,
    profile: Path | None = None,
    statements: bool = False,
    partitions: int = 1,
    lanes: int = DEFAULT_LANES,
    max_chunk: int = DEFAULT_MAX_CHUNK,
    phases: bool = False,
) -> dict[str, object]:
    settings = load_settings()
    run = "proj" + secrets.token_hex(3)
    batches = await form_batches(count, tenant=run)
    kafka, db_url = await fresh(
        settings.kafka, settings.database.url.get_secret_value(), run, partitions=partitions
    )
    await publish(kafka, batches)
    raw = await measure_raw(kafka, db_url, count, topic=kafka.claims_topic)
    profiler = cProfile.Profile() if profile else None
    if profiler:
        profiler.enable()

    def measure() -> Awaitable[ProjectorRun]:
        return measure_projector(kafka, db_url, count, lanes=lanes, max_chunk=max_chunk)

    where: dict[str, object] = {}
    tallying: AbstractContextManager[dict[str, Tally]] = (
        timed_statements() if statements else nullcontext({})
    )
    with tallying as tallies:
        if phases:
            projector, where = await with_phases(measure, db_url)
        else:
            projector = await measure()
    if profiler and profile:
        profiler.disable()
        profiler.dump_stats(profile)
    candidates = sum(len(b.candidates) for b in batches)
    refusals = sum(len(b.refusals) for b in batches)
    chunks = tallies["BEGIN;"].calls if "BEGIN;" in tallies else 0
    timings = {"chunks": chunks, "statements": report(tallies, chunks)} if statements else {}
    return {
        "batches": count,
        "partitions": partitions,
        "lanes": lanes,
        "max_chunk": max_chunk,
        "candidates_per_batch": round(candidates / count, 2),
        "refusals_per_batch": round(refusals / count, 2),
        "raw_consume_copy_per_s": round(raw, 1),
        "projector_batches_per_s": round(projector.per_s, 1),
        "projector_over_raw": round(projector.per_s / raw, 4),
        "projector_steady_batches_per_s": round(projector.steady_per_s, 1),
        "projector_steady_over_raw": round(projector.steady_per_s / raw, 4),
        # Over the steady stretch: wall time, the projector's CPU and its PostgreSQL backends'.
        "steady_wall_us_per_batch": round(projector.wall_us_per_batch, 1),
        "projector_cpu_us_per_batch": round(projector.cpu_us_per_batch, 1),
        "postgres_cpu_us_per_batch": round(projector.postgres_cpu_us_per_batch, 1),
        # Cores the whole machine kept busy meanwhile (Kafka and other processes included).
        "machine_busy_cores": round(projector.busy_cores, 2),
        **timings,
        **({"phases": where} if phases else {}),
    }


if __name__ == "__main__":
    from engram.infra.logs import configure_logging

    configure_logging("warning")
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=3000)
    parser.add_argument(
        "--profile", type=Path, help="write a cProfile of the projector's run here and print it"
    )
    parser.add_argument(
        "--statements",
        action="store_true",
        help="time each statement the projector sends (bench/statement_timing.py), per chunk",
    )
    parser.add_argument(
        "--phases",
        action="store_true",
        help="time each chunk's phases, the event loop's idle share and PostgreSQL's backends'"
        " wait states (bench/projector_phases.py; the sampling slows the run)",
    )
    parser.add_argument(
        "--partitions",
        type=int,
        default=1,
        help="claims partitions (the 8 principals spread over them by key, as in production)",
    )
    parser.add_argument(
        "--lanes",
        type=int,
        default=DEFAULT_LANES,
        help="the projector's lanes per partition (1: one chunk per partition at a time)",
    )
    parser.add_argument(
        "--max-chunk",
        type=int,
        default=DEFAULT_MAX_CHUNK,
        help="records a lane applies in one transaction at most",
    )
    args = parser.parse_args()
    result = asyncio.run(
        main(
            args.turns,
            args.profile,
            args.statements,
            args.partitions,
            args.lanes,
            args.max_chunk,
            args.phases,
        )
    )
    sys.stdout.write(orjson.dumps(result, option=orjson.OPT_INDENT_2).decode() + "\n")
    if args.profile:
        text = io.StringIO()
        stats = pstats.Stats(str(args.profile), stream=text).strip_dirs()
        stats.sort_stats("tottime").print_stats(30)
        stats.sort_stats("cumulative").print_stats(60)
        sys.stdout.write(text.getvalue())
