"""The projection digest of the projector bench's corpus, to compare two checkouts' projectors.

Forms ``--turns`` bench turns (``bench/projector.py``'s corpus, under a fixed tenant so two runs
form the same batches), adds a correction of every kind and a deletion every ``--every``
batches, and projects them through ``project_records`` — the projector's own chunk path,
decoding the same bytes, without Kafka — into a fresh, migrated database, in chunks of
``--chunk`` records. With ``--window N`` the records are shuffled within windows of N (a fixed
seed), so late batches rewind principals across chunk boundaries. Prints JSON: the projection
digest, digests of the memory-event outbox and of ``claims_history`` (payloads and undo
records), and the seconds the projection took.

The policy version digests the formation package's source, so two checkouts form different
batches (other versions, other ids) from the same turns: to compare two checkouts' projectors,
form the records once (``--records FILE`` writes them when FILE does not exist and reads them
when it does) and project the same bytes with each checkout on ``PYTHONPATH``:

    PYTHONPATH=../base .venv/bin/python dev/projection_digest.py --records /tmp/r.jsonl
    PYTHONPATH=. .venv/bin/python dev/projection_digest.py --records /tmp/r.jsonl
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import hashlib
import io
import pstats
import random
import secrets
import sys
import time
import uuid
from datetime import timedelta
from pathlib import Path

import asyncpg
import orjson

from bench.projector import form_batches
from engram.formation.corrections import candidate_content, candidate_hash, form_correction
from engram.formation.policy import FormationPolicy
from engram.infra.settings import load_settings
from engram.projections.beliefs.digest import projection_digest
from engram.projections.beliefs.store import ClaimsRecord, project_records
from engram.schemas.claims import ClaimsBatchFormed, SourcePosition, decode_claims_batch
from engram.schemas.corrections import BeliefCorrected, BeliefDeleted, CorrectionKind
from tests.support.databases import create_database, drop_database

TENANT = "digest"
TOPIC = "digest.claims"
KINDS = (
    CorrectionKind.UNTRUE,
    CorrectionKind.CHANGED,
    CorrectionKind.NOT_HERE,
    CorrectionKind.UNSPECIFIED,
)


def corrections(batches: list[ClaimsBatchFormed], every: int) -> list[ClaimsBatchFormed]:
    """A correction of each kind in turn, and every fifth a deletion, of the first candidate of
    every ``every``-th batch, dated half an hour after it (later batches repeat the content)."""
    made: list[ClaimsBatchFormed] = []
    targets = [b for b in batches[::every] if b.candidates]
    for n, batch in enumerate(targets):
        candidate = batch.candidates[0]
        common = {
            "event_id": uuid.uuid5(uuid.NAMESPACE_URL, f"digest/correction/{n}"),
            "tenant": batch.tenant,
            "principal": batch.principal,
            "project": "corrections",
            "session": "corrections",
            "occurred_at": batch.occurred_at + timedelta(minutes=30),
            "belief_id": uuid.uuid5(uuid.NAMESPACE_URL, f"digest/belief/{n}"),
            "content_hash": candidate_hash(candidate),
        }
        event: BeliefCorrected | BeliefDeleted
        if n % 5 == 4:
            event = BeliefDeleted(**common)
        else:
            kind = KINDS[n % len(KINDS)]
            event = BeliefCorrected(
                **common,
                kind=kind,
                content=candidate_content(candidate),
                statement=candidate.statement,
                replacement="Porto" if kind is CorrectionKind.CHANGED else None,
            )
        source = SourcePosition(topic="digest.episodes", partition=0, offset=len(batches) + n)
        made.append(form_correction(event, FormationPolicy(), source=source))
    return made


def records(batches: list[ClaimsBatchFormed], window: int) -> list[tuple[int, bytes]]:
    """(offset, bytes) as the claims topic would hold them: in log order, or shuffled within
    windows of ``window`` with a fixed seed."""
    ordered = list(batches)
    if window > 1:
        rng = random.Random(13)
        for start in range(0, len(ordered), window):
            part = ordered[start : start + window]
            rng.shuffle(part)
            ordered[start : start + window] = part
    return [(i, orjson.dumps(b.model_dump(mode="json"))) for i, b in enumerate(ordered)]


async def project(url: str, wire: list[tuple[int, bytes]], chunk: int) -> float:
    """Seconds to project ``wire`` chunk by chunk, decoding each record as the projector does."""
    conn = await asyncpg.connect(url)
    try:
        started = time.perf_counter()
        for start in range(0, len(wire), chunk):
            part = wire[start : start + chunk]
            decoded = [ClaimsRecord(decode_claims_batch(raw), offset, raw) for offset, raw in part]
            await project_records(conn, decoded, topic=TOPIC, partition=0, read_through=part[-1][0])
        return time.perf_counter() - started
    finally:
        await conn.close()


async def table_digest(conn: asyncpg.Connection, query: str) -> str:
    digest = hashlib.sha256()
    for row in await conn.fetch(query):
        digest.update(row[0].encode())
    return digest.hexdigest()


async def digests(url: str) -> dict[str, object]:
    conn = await asyncpg.connect(url)
    try:
        return {
            "projection": await projection_digest(conn),
            "outbox": await table_digest(
                conn,
                "SELECT event_id::text || payload::text FROM memory_event_outbox ORDER BY event_id",
            ),
            "claims_history": await table_digest(
                conn,
                "SELECT row_to_json(h)::text FROM claims_history h ORDER BY run_id",
            ),
            "rows": {
                table: await conn.fetchval(f"SELECT count(*) FROM {table}")
                for table in ("belief", "evidence", "refusal", "belief_rejection", "entity")
            },
        }
    finally:
        await conn.close()


async def formed(args: argparse.Namespace) -> list[tuple[int, bytes]]:
    """The records to project: read from ``args.records`` when it exists, else formed (and
    written there when it is named)."""
    path: Path | None = args.records
    if path is not None and path.exists():
        return list(enumerate(path.read_bytes().splitlines()))
    batches = await form_batches(args.turns, tenant=TENANT)
    batches += corrections(batches, args.every) if args.every else []
    wire = records(batches, args.window)
    if path is not None:
        path.write_bytes(b"\n".join(raw for _, raw in wire) + b"\n")
    return wire


async def main(args: argparse.Namespace) -> dict[str, object]:
    wire = await formed(args)
    admin_url = load_settings().database.url.get_secret_value()
    name = "digest" + secrets.token_hex(3)
    url = await create_database(admin_url, name)
    profiler = cProfile.Profile() if args.profile else None
    try:
        if profiler:
            profiler.enable()
        seconds = await project(url, wire, args.chunk)
        if profiler:
            profiler.disable()
            profiler.dump_stats(args.profile)
        return {
            "records": len(wire),
            "chunk": args.chunk,
            "window": args.window,
            "project_s": round(seconds, 3),
            **await digests(url),
        }
    finally:
        await drop_database(admin_url, name)


if __name__ == "__main__":
    from engram.infra.logs import configure_logging

    configure_logging("warning")
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=3000)
    parser.add_argument("--chunk", type=int, default=500)
    parser.add_argument("--window", type=int, default=0)
    parser.add_argument("--every", type=int, default=97, help="a correction every N batches")
    parser.add_argument("--profile", type=Path, help="write a cProfile of the projection here")
    parser.add_argument("--records", type=Path, help="read the records here, or form and write")
    args = parser.parse_args()
    result = asyncio.run(main(args))
    sys.stdout.write(orjson.dumps(result, option=orjson.OPT_INDENT_2).decode() + "\n")
    if args.profile:
        text = io.StringIO()
        stats = pstats.Stats(str(args.profile), stream=text).strip_dirs()
        stats.sort_stats("tottime").print_stats(40)
        sys.stdout.write(text.getvalue())
