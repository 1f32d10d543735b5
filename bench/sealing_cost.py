"""What log encryption costs each reader and writer a record, against the plaintext path in the
same run: CPU microseconds per record, no Kafka and no database (the data key is in the key
store's cache, as it is in a steady worker).

For each place the log is sealed or opened it times the plaintext work and the sealed work on
the same synthetic turns and the claims batches formation makes of them, alternating the two
``--rounds`` times so the machine's load falls on both, and prints the medians, the extra
microseconds encryption adds and the cyclic collections each side triggered:

  worker.turn      admit a record of ``engram.episodes`` (dead_letters.admit_record), and open
                   it when sealed (what formation reads before the core runs);
  worker.claims    the claims batch's bytes on ``engram.claims`` (sealed when on);
  projector.claims decode a record of ``engram.claims`` (the projector's ``_decode``);
  indexer.turn     the log follower's opening and decoding of a turn (for the index and vectors);
  producer.turn    what a door appends (EpisodeProducer's sealing and serialising), without
                   the door's re-read of the key's row (a database round trip).

    .venv/bin/python bench/sealing_cost.py [--turns 2000] [--rounds 5]
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import secrets
import statistics
import sys
import time
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import Any

import orjson
from aiokafka import ConsumerRecord, TopicPartition

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))  # this checkout's code, not an installed copy's

from bench.throughput import synthetic_turns  # noqa: E402
from engram.formation.policy import FormationPolicy  # noqa: E402
from engram.keys.cipher import new_data_key  # noqa: E402
from engram.keys.kek import LocalKek  # noqa: E402
from engram.keys.store import KeyStore, new_pseudonym  # noqa: E402
from engram.projections.beliefs.projector import BeliefProjector  # noqa: E402
from engram.projections.messages.reading import opened  # noqa: E402
from engram.projections.messages.store import LogRecord, messages_of  # noqa: E402
from engram.schemas.claims import SourcePosition  # noqa: E402
from engram.schemas.log import LogEvent  # noqa: E402
from engram.sealing.events import LogSealer, NoKeys, Sealer  # noqa: E402
from engram.streams.dead_letters import DeadLetter, admit_record  # noqa: E402
from engram.streams.formation_stage import FormationStage  # noqa: E402

MAX_BYTES = 1024 * 1024


def offline_sealer(principals: set[tuple[str, str]]) -> LogSealer:
    """A sealer whose key store holds every principal's data key in its cache (never asks the
    database: reading and formation-side sealing use the cache, as a steady worker does)."""
    kek = LocalKek(secrets.token_bytes(32))
    store = KeyStore(pool=None, current=kek)  # never used: every key is in the cache
    for tenant, principal in principals:
        store.cache.put(tenant, principal, new_data_key())
        store.names.put(tenant, principal, new_pseudonym())
    return LogSealer(store, seal_new=True)


async def admit_and_open(sealer: Sealer, raw: bytes) -> None:
    event = admit_record(raw, max_bytes=MAX_BYTES)
    assert not isinstance(event, DeadLetter), event
    await sealer.open(event)


def projector_with(sealer: Sealer) -> BeliefProjector:
    """A projector that only decodes (its ``_decode``: the claims topic's records checked,
    opened when sealed and decoded), with nothing connected."""
    projector = BeliefProjector.__new__(BeliefProjector)
    projector._sealer = sealer
    return projector


async def projector_decode(projector: BeliefProjector, raw: bytes) -> None:
    record = ConsumerRecord("claims", 0, 0, 0, 0, None, raw, None, 0, len(raw), ())
    decoded = await projector._decode(TopicPartition("claims", 0), [record])
    assert len(decoded) == 1


COLLECTIONS = [0]
"""Cyclic collections (any generation) since the process started: :func:`count_collections`."""


def count_collections(phase: str, info: dict[str, int]) -> None:
    if phase == "start":
        COLLECTIONS[0] += 1


async def timed(items: Sequence[Any], step: Callable[[Any], Awaitable[object]]) -> float:
    """CPU microseconds a record of ``step`` over ``items`` (the collector left running, as in
    the worker: its share of the cost is part of what is measured)."""
    started = time.process_time()
    for item in items:
        await step(item)
    return 1e6 * (time.process_time() - started) / len(items)


async def main(count: int, rounds: int) -> dict[str, object]:
    turns = synthetic_turns(count, tenant="benchseal")
    sealer = offline_sealer({(turn.tenant, turn.principal) for turn in turns})
    plain: Sealer = NoKeys()
    stage = FormationStage(FormationPolicy())
    batches = [
        await stage.form(turn, SourcePosition(topic="bench", partition=0, offset=offset))
        for offset, turn in enumerate(turns)
    ]
    plain_turns = [turn.__pydantic_serializer__.to_json(turn) for turn in turns]
    sealed_events: list[LogEvent] = [await sealer.seal(turn, verified=False) for turn in turns]
    sealed_turns = [event.__pydantic_serializer__.to_json(event) for event in sealed_events]
    plain_claims = [await plain.seal_claims(batch) for batch in batches]
    sealed_claims = [await sealer.seal_claims(batch) for batch in batches]
    projector_plain, projector_sealed = projector_with(plain), projector_with(sealer)

    async def index(which: Sealer, raw: bytes) -> None:
        messages_of([await opened(which, LogRecord(0, 0, raw))])

    async def produce(which: Sealer, turn: Any) -> None:
        event = await which.seal(turn, verified=False)
        event.__pydantic_serializer__.to_json(event)

    cases: dict[str, tuple[Callable[[], Awaitable[float]], Callable[[], Awaitable[float]]]] = {
        "worker.turn": (
            lambda: timed(plain_turns, lambda raw: admit_and_open(plain, raw)),
            lambda: timed(sealed_turns, lambda raw: admit_and_open(sealer, raw)),
        ),
        "worker.claims": (
            lambda: timed(batches, plain.seal_claims),
            lambda: timed(batches, sealer.seal_claims),
        ),
        "projector.claims": (
            lambda: timed(plain_claims, lambda raw: projector_decode(projector_plain, raw)),
            lambda: timed(sealed_claims, lambda raw: projector_decode(projector_sealed, raw)),
        ),
        "indexer.turn": (
            lambda: timed(plain_turns, lambda raw: index(plain, raw)),
            lambda: timed(sealed_turns, lambda raw: index(sealer, raw)),
        ),
        "producer.turn": (
            lambda: timed(turns, lambda turn: produce(plain, turn)),
            lambda: timed(turns, lambda turn: produce(sealer, turn)),
        ),
    }
    result: dict[str, object] = {"turns": count, "rounds": rounds}
    gc.freeze()  # as `engram worker` does once started (infra.heap.freeze_startup_heap)
    gc.callbacks.append(count_collections)
    worker_extra = 0.0
    for name, (off, on) in cases.items():
        offs, ons = [], []
        collections = {"plain": 0, "sealed": 0}
        for _ in range(rounds):
            gc.collect()
            before = COLLECTIONS[0]
            offs.append(await off())
            collections["plain"] += COLLECTIONS[0] - before
            gc.collect()
            before = COLLECTIONS[0]
            ons.append(await on())
            collections["sealed"] += COLLECTIONS[0] - before
        off_us, on_us = statistics.median(offs), statistics.median(ons)
        result[name] = {
            "plain_us": round(off_us, 1),
            "sealed_us": round(on_us, 1),
            "extra_us": round(on_us - off_us, 1),
            # Does sealing leave the collector more to do (the worker keeps CPython's young
            # threshold)? Collections over all rounds, start-up's heap frozen as the worker's.
            "gc_collections": collections,
        }
        if name != "producer.turn":
            worker_extra += on_us - off_us
    # `engram worker` does all but the producer's part once per turn.
    result["worker_extra_us_per_turn"] = round(worker_extra, 1)
    result["sealed_turn_bytes_over_plain"] = round(
        sum(map(len, sealed_turns)) / sum(map(len, plain_turns)), 3
    )
    result["sealed_claims_bytes_over_plain"] = round(
        sum(map(len, sealed_claims)) / sum(map(len, plain_claims)), 3
    )
    return result


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=2000)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    out = asyncio.run(main(args.turns, args.rounds))
    sys.stdout.write(orjson.dumps(out, option=orjson.OPT_INDENT_2).decode() + "\n")
