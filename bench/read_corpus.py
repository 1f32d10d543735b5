"""A large belief projection for the read bench, written through the projector's own store.

Every belief here was formed by the formation core (:func:`formation.core.form_episode`, from
proposals, so no extractor cost) and written by :func:`engram.projections.beliefs.store.project_records`
— load, resolve, set-based writes and the stored offset, exactly as the belief projector does
for a chunk of ``engram.claims`` — only without Kafka in between. Nothing is hand-inserted.

Each batch is one episode of one principal: ten ``uses`` claims of a team named in that episode
(new beliefs; each team is its own conflict key, as distinct subjects are), one ``lives_in``
(a single-valued change that supersedes the principal's previous city, so histories grow) and
one proposal with an unmapped relation (a refusal): eleven belief rows and one refusal per
batch. Principals are split across worker processes, each with its own connection and its own
partition of a pretend claims topic, so the stored offsets make a stopped generation resume
where it stopped (generation is deterministic).

    .venv/bin/python -m bench.read_corpus --beliefs 1000000
"""

from __future__ import annotations

import argparse
import asyncio
import multiprocessing
import sys
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

import asyncpg
import orjson

from engram.formation.core import form_episode
from engram.formation.policy import FormationPolicy
from engram.formation.proposals import Proposal
from engram.infra.settings import load_settings
from engram.projections.beliefs.store import PROJECTOR, ClaimsRecord, project_records
from engram.projections.migrate import migrate
from engram.schemas.claims import SourcePosition
from engram.schemas.common import Role
from engram.schemas.episodes import Message, TurnAppended

TENANT = "bench"
TOPIC = "bench.claims"
BELIEFS_PER_BATCH = 11
CITIES = ["Cork", "Berlin", "Lisbon", "Porto", "Oslo", "Riga", "Turin", "Bergen"]
EPOCH = datetime(2026, 1, 1, tzinfo=UTC)


@dataclass(frozen=True)
class Corpus:
    """The shape of a generated projection; its name names the database it lives in."""

    beliefs: int
    principals: int
    workers: int

    @property
    def batches_per_principal(self) -> int:
        return max(1, -(-self.beliefs // (self.principals * BELIEFS_PER_BATCH)))

    @property
    def database(self) -> str:
        return f"engram_read_{self.beliefs}_{self.principals}_{self.workers}"

    def principal(self, index: int) -> str:
        return f"p{index:05d}"


def episode(corpus: Corpus, person: int, seq: int) -> tuple[TurnAppended, list[Proposal]]:
    """One principal's ``seq``-th turn and what an extractor proposed for it."""
    team, tools = f"Team{seq}", [f"tool{seq}-{j}" for j in range(10)]
    city = CITIES[(person + seq) % len(CITIES)]
    sentences = [f"{team} uses {tool}." for tool in tools]
    sentences += [f"I live in {city}.", "I dream of Mars."]
    proposals = [
        Proposal(team, "uses", tool, f"{team} uses {tool}", "assert", "present", "bench")
        for tool in tools
    ]
    proposals.append(Proposal("I", "lives_in", city, f"I live in {city}", "assert", "present", "b"))
    proposals.append(
        Proposal("I", "dreams_of", "Mars", "I dream of Mars", "assert", "present", "b")
    )
    principal = corpus.principal(person)
    turn = TurnAppended(
        event_id=uuid.uuid5(uuid.NAMESPACE_URL, f"bench-read/{principal}/{seq}"),
        tenant=TENANT,
        principal=principal,
        project=f"proj{person % 4}",
        session=f"s{seq // 8}",
        occurred_at=EPOCH + timedelta(minutes=seq),
        messages=[Message(ordinal=0, role=Role.USER, content=" ".join(sentences))],
    )
    return turn, proposals


def batches_of(corpus: Corpus, worker: int, start: int = 0) -> Iterator[ClaimsRecord]:
    """The worker's records in log order from offset ``start``: each principal's turns in
    order, interleaved (those before ``start`` are not formed at all)."""
    policy = FormationPolicy()
    people = range(worker, corpus.principals, corpus.workers)
    offset = 0
    for seq in range(corpus.batches_per_principal):
        for person in people:
            if offset >= start:
                turn, proposals = episode(corpus, person, seq)
                source = SourcePosition(topic="bench.episodes", partition=worker, offset=offset)
                batch = form_episode(turn, policy, {0: proposals}, source=source)
                yield ClaimsRecord(batch, offset)
            offset += 1


async def _generate(url: str, corpus: Corpus, worker: int, chunk: int) -> int:
    conn = await asyncpg.connect(url)
    try:
        done = await conn.fetchval(
            "SELECT next_offset FROM projector_offset WHERE projector = $1 AND topic = $2 "
            "AND partition = $3",
            PROJECTOR,
            TOPIC,
            worker,
        )
        pending: list[ClaimsRecord] = []
        written = 0
        for record in batches_of(corpus, worker, start=done or 0):
            pending.append(record)
            if len(pending) == chunk:
                await _project(conn, pending, worker)
                written, pending = written + len(pending), []
        if pending:
            await _project(conn, pending, worker)
            written += len(pending)
        return written
    finally:
        await conn.close()


async def _project(conn: asyncpg.Connection, records: list[ClaimsRecord], worker: int) -> None:
    await project_records(
        conn, records, topic=TOPIC, partition=worker, read_through=records[-1].offset
    )


async def generate_here(url: str, corpus: Corpus, *, chunk: int = 200) -> int:
    """The whole corpus into a migrated database at ``url``, in this process (small corpora,
    the bench's smoke test); how many batches were projected."""
    return sum([await _generate(url, corpus, w, chunk) for w in range(corpus.workers)])


def _worker(url: str, corpus: Corpus, worker: int, chunk: int) -> int:
    return asyncio.run(_generate(url, corpus, worker, chunk))


async def prepare(admin_url: str, corpus: Corpus) -> str:
    """The corpus database (created and migrated if missing); its URL."""
    conn = await asyncpg.connect(admin_url)
    try:
        exists = await conn.fetchval(
            "SELECT 1 FROM pg_database WHERE datname = $1", corpus.database
        )
        if not exists:
            await conn.execute(f'CREATE DATABASE "{corpus.database}"')
    finally:
        await conn.close()
    url = admin_url.rpartition("/")[0] + f"/{corpus.database}"
    conn = await asyncpg.connect(url)
    try:
        await migrate(conn)
    finally:
        await conn.close()
    return url


def generate(admin_url: str, corpus: Corpus, *, chunk: int = 200) -> dict[str, object]:
    """Bring the corpus to its full size (resuming a stopped run); what it took."""
    url = asyncio.run(prepare(admin_url, corpus))
    started = time.perf_counter()
    with multiprocessing.get_context("spawn").Pool(corpus.workers) as pool:
        written = pool.starmap(_worker, [(url, corpus, w, chunk) for w in range(corpus.workers)])
    seconds = time.perf_counter() - started
    batches = sum(written)
    return {
        "database": corpus.database,
        "batches_projected_now": batches,
        "seconds": round(seconds, 1),
        "batches_per_s": round(batches / seconds, 1) if batches else None,
        "beliefs": asyncio.run(_count(url)),
    }


async def _count(url: str) -> int:
    conn = await asyncpg.connect(url)
    try:
        return int(await conn.fetchval("SELECT count(*) FROM belief"))
    finally:
        await conn.close()


def arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--beliefs", type=int, default=1_000_000, help="belief rows to form")
    parser.add_argument("--principals", type=int, default=1000)
    parser.add_argument("--workers", type=int, default=2, help="generating processes")


if __name__ == "__main__":
    from engram.infra.logs import configure_logging

    configure_logging("warning")
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    arguments(parser)
    parser.add_argument("--chunk", type=int, default=200, help="records per transaction")
    args = parser.parse_args()
    corpus = Corpus(args.beliefs, args.principals, args.workers)
    admin = load_settings().database.url.get_secret_value()
    result = generate(admin, corpus, chunk=args.chunk)
    sys.stdout.write(orjson.dumps(result, option=orjson.OPT_INDENT_2).decode() + "\n")
