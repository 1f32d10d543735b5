"""What the message index and the message vectors cost to write: the indexer's store and the
embedding follower's, against the same rows written plainly, and the index against itself as
it was before migration 0027 (no postings or counts), in the same run.

The log's records (the dev conversations, or synthetic turns) are written in chunks of 500 by
:func:`engram.projections.messages.store.index_records` — the principals' locks, the hidden and
forgotten checks, the ``engram_english`` vector and its GIN index, the stored offset — and, as
the baseline, the same message rows inserted into a table of the same columns and key without
the vector (no index but the key, no checks). A third contender, ``unposted``, is the indexer's transaction
without what migration 0027 adds: the same locks and checks, the same ``INSERT`` into
``message``, but no postings and no counts. Rounds alternate the three, each into its table
emptied first, so a slow spell on a shared machine hits both; prints JSON with each one's messages/s
(median over rounds), the index's share of the baseline's rate and of the index before 0027.

The third arm is the embedding follower's work per fetch (:mod:`engram.projections.messages.vectors`):
embed every message with the local default (WordLlama, 256 dimensions, ``content-words-v1``) and
write the vectors with the principals' locks, the hidden and forgotten checks and the stored
offset. For it the bench also reports this process's CPU time per message (``time.process_time``,
the embedding and the client side of the writes; the server's is not in it) and the embedding
alone (CPU per message, and messages per CPU-second: the rate one core sustains).

    .venv/bin/python -m bench.message_index --turns /work/shared/data/locomo-dev.jsonl --rounds 3
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import time
from pathlib import Path

import asyncpg
import orjson

from engram.evaluation.recall import scratch_database
from engram.infra.db import transaction
from engram.infra.logs import configure_logging
from engram.infra.settings import load_settings
from engram.ingest.jsonl import read_episodes
from engram.projections.messages.embeddings.generation import EmbeddingGeneration
from engram.projections.messages.embeddings.local import WordLlamaEmbedder
from engram.projections.messages.embeddings.store import register
from engram.projections.messages.store import (
    _COLUMNS,
    _INSERT,
    STATS_TABLES,
    LogRecord,
    index_records,
    messages_of,
)
from engram.projections.messages.vectors import embed_messages, write_vectors
from engram.projections.principal_lock import lock_principals

CHUNK = 500
TOPIC = "bench.episodes"

_PLAIN = """
CREATE TABLE plain_message (LIKE message INCLUDING DEFAULTS);
ALTER TABLE plain_message DROP COLUMN search_vector;
ALTER TABLE plain_message ADD PRIMARY KEY (tenant, principal, episode_id, message_ordinal);
"""

_PLAIN_INSERT = """
INSERT INTO plain_message (tenant, principal, project, session, episode_id, message_ordinal,
                           role, author, content, occurred_at, source_partition, source_offset)
SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::uuid[], $6::int[],
                     $7::text[], $8::text[], $9::text[], $10::timestamptz[], $11::int[],
                     $12::bigint[])
ON CONFLICT DO NOTHING
"""


def log_records(turns: Path) -> list[LogRecord]:
    return [
        LogRecord(0, offset, episode.model_dump_json().encode())
        for offset, episode in enumerate(read_episodes(turns))
    ]


async def indexed(conn: asyncpg.Connection, records: list[LogRecord]) -> float:
    await conn.execute(
        f"TRUNCATE message, message_hidden, projector_offset, {', '.join(STATS_TABLES)}"
    )
    started = time.perf_counter()
    for start in range(0, len(records), CHUNK):
        await index_records(conn, TOPIC, 0, records[start : start + CHUNK])
    return time.perf_counter() - started


async def unposted(conn: asyncpg.Connection, records: list[LogRecord]) -> float:
    """The indexer's write before migration 0027: its lock, checks and ``INSERT``, no counts."""
    await conn.execute(f"TRUNCATE message, message_hidden, {', '.join(STATS_TABLES)}")
    started = time.perf_counter()
    for start in range(0, len(records), CHUNK):
        rows = messages_of(records[start : start + CHUNK]).rows
        async with transaction(conn):
            await lock_principals(conn, {(r.tenant, r.principal) for r in rows})
            await conn.execute(_INSERT, *[[getattr(r, name) for r in rows] for name in _COLUMNS])
    return time.perf_counter() - started


EMBEDDER = WordLlamaEmbedder(256)
GENERATION = EmbeddingGeneration.of(EMBEDDER.model)


async def embedded(
    conn: asyncpg.Connection, records: list[LogRecord]
) -> tuple[float, float, float]:
    """The follower's path over ``records``: wall seconds, this process's CPU seconds, and the
    CPU seconds of the embedding alone."""
    await conn.execute("TRUNCATE embedding_vector, projector_offset")
    started, cpu, embedding = time.perf_counter(), time.process_time(), 0.0
    for start in range(0, len(records), CHUNK):
        part = records[start : start + CHUNK]
        before = time.process_time()
        vectors = await embed_messages(EMBEDDER, GENERATION, part)
        embedding += time.process_time() - before
        await write_vectors(conn, GENERATION.name, TOPIC, 0, part, vectors)
    return time.perf_counter() - started, time.process_time() - cpu, embedding


async def plain(conn: asyncpg.Connection, records: list[LogRecord]) -> float:
    await conn.execute("TRUNCATE plain_message")
    started = time.perf_counter()
    for start in range(0, len(records), CHUNK):
        rows = messages_of(records[start : start + CHUNK]).rows
        columns = [
            [getattr(row, name) for row in rows] for name in type(rows[0]).__dataclass_fields__
        ]
        async with conn.transaction():
            await conn.execute(_PLAIN_INSERT, *columns)
    return time.perf_counter() - started


async def main(turns: Path, rounds: int) -> dict[str, object]:
    records = log_records(turns)
    messages = len(messages_of(records).rows)
    admin = load_settings().database.url.get_secret_value()
    runs: dict[str, list[float]] = {"index": [], "plain": [], "unposted": [], "embed": []}
    cpu_ms: dict[str, list[float]] = {"follower": [], "embedding": []}
    async with scratch_database(admin) as url:
        conn = await asyncpg.connect(url)
        try:
            await conn.execute(_PLAIN)
            await register(conn, GENERATION)
            for _ in range(rounds):
                runs["plain"].append(messages / await plain(conn, records))
                runs["index"].append(messages / await indexed(conn, records))
                runs["unposted"].append(messages / await unposted(conn, records))
                wall, cpu, embedding = await embedded(conn, records)
                runs["embed"].append(messages / wall)
                cpu_ms["follower"].append(cpu * 1000 / messages)
                cpu_ms["embedding"].append(embedding * 1000 / messages)
        finally:
            await conn.close()
    index, baseline = statistics.median(runs["index"]), statistics.median(runs["plain"])
    before = statistics.median(runs["unposted"])
    embed = statistics.median(runs["embed"])
    embedding_ms = statistics.median(cpu_ms["embedding"])
    return {
        "turns": str(turns),
        "records": len(records),
        "messages": messages,
        "rounds": rounds,
        "index_messages_per_s": round(index, 1),
        "plain_messages_per_s": round(baseline, 1),
        "index_share_of_plain": round(index / baseline, 3),
        "unposted_messages_per_s": round(before, 1),
        "index_share_of_unposted": round(index / before, 3),
        "follower_messages_per_s": round(embed, 1),
        "follower_share_of_index": round(embed / index, 3),
        "follower_cpu_ms_per_message": round(statistics.median(cpu_ms["follower"]), 4),
        "embedding_cpu_ms_per_message": round(embedding_ms, 4),
        "embedding_messages_per_cpu_s": round(1000 / embedding_ms, 1),
        "runs": {name: [round(r, 1) for r in values] for name, values in runs.items()},
    }


if __name__ == "__main__":
    configure_logging("warning")  # stdout is the JSON report
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=Path, required=True)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    result = asyncio.run(main(args.turns, args.rounds))
    sys.stdout.write(orjson.dumps(result, option=orjson.OPT_INDENT_2).decode() + "\n")
