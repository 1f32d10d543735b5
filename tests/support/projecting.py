"""Running the real belief projector over real Kafka until a set of batches is projected."""

from __future__ import annotations

import asyncio
import contextlib
import uuid
from collections.abc import Awaitable, Callable, Sequence
from datetime import UTC, datetime

import asyncpg
import orjson
from aiokafka import AIOKafkaProducer

from engram.formation.core import form_episode
from engram.formation.policy import FormationPolicy
from engram.formation.proposals import Proposal
from engram.infra.settings import KafkaSettings
from engram.projections.beliefs.projector import DEFAULT_LANES, BeliefProjector
from engram.schemas.claims import ClaimsBatchFormed, SourcePosition
from engram.schemas.common import principal_hash, principal_key
from engram.schemas.episodes import TurnAppended
from engram.watermarks.backlog import BacklogEntry, record_failure, record_pending_many
from tests.support.conditions import wait_until
from tests.support.episodes import turn


def claim(
    subject: str,
    relation: str,
    obj: str,
    quote: str,
    *,
    facet: str | None = None,
    polarity: str = "assert",
    tense: str = "present",
) -> Proposal:
    return Proposal(subject, relation, obj, quote, polarity, tense, "test", facet=facet)


def batch_of(
    episode: TurnAppended, *claims: Proposal, offset: int = 0, policy: FormationPolicy | None = None
) -> ClaimsBatchFormed:
    source = SourcePosition(topic="episodes", partition=0, offset=offset)
    return form_episode(episode, policy or FormationPolicy(), {0: list(claims)}, source=source)


CITIES = ["Cork", "Berlin", "Lisbon", "Porto", "Oslo", "Riga", "Turin", "Bergen"]


def city_batches(tenant: str, count: int) -> list[ClaimsBatchFormed]:
    """``count`` batches, one per log offset, for three principals in two projects: each moves
    city (a single-valued change, so order matters) and names a new tool."""
    policy = FormationPolicy()
    batches = []
    for seq in range(count):
        city = CITIES[seq % len(CITIES)]
        text = f"I live in {city} and I use Tool{seq}."
        episode = turn(tenant, f"p{seq % 3}", f"proj{seq % 2}", text, seq=seq)
        proposals = [
            Proposal("I", "lives_in", city, f"I live in {city}", "assert", "present", "test"),
            Proposal("I", "uses", f"Tool{seq}", f"I use Tool{seq}", "assert", "present", "test"),
        ]
        source = SourcePosition(topic="episodes", partition=0, offset=seq)
        batches.append(form_episode(episode, policy, {0: proposals}, source=source))
    return batches


async def publish_batches(kafka: KafkaSettings, batches: Sequence[ClaimsBatchFormed]) -> None:
    producer = AIOKafkaProducer(bootstrap_servers=kafka.bootstrap, enable_idempotence=True)
    await producer.start()
    try:
        for batch in batches:
            await producer.send_and_wait(
                kafka.claims_topic,
                orjson.dumps(batch.model_dump(mode="json")),
                key=principal_key(batch.tenant, batch.principal),
            )
    finally:
        await producer.stop()


async def project_all(
    kafka: KafkaSettings,
    pool: asyncpg.Pool,
    batches: Sequence[ClaimsBatchFormed],
    *,
    timeout_s: float = 60,
) -> None:
    """Publish ``batches`` and run a projector until each one has a committed run."""
    await publish_batches(kafka, batches)
    wanted = [b.batch_id for b in batches]
    projector = BeliefProjector(kafka, pool)
    task = asyncio.create_task(projector.run())

    async def projected() -> bool:
        if task.done():
            task.result()
        runs = await pool.fetchval(
            "SELECT count(*) FROM consolidation_run WHERE run_id = ANY($1)", wanted
        )
        return bool(runs >= len(set(wanted)))

    try:
        await wait_until(projected, timeout_s=timeout_s, what="batches projected")
    finally:
        projector.stop()
        await task


async def run_count(pool: asyncpg.Pool) -> int:
    return int(await pool.fetchval("SELECT count(*) FROM consolidation_run"))


async def run_projector_until(
    kafka: KafkaSettings,
    pool: asyncpg.Pool,
    *,
    count: int,
    max_chunk: int = 1,
    timeout_s: float = 60,
) -> None:
    """Run a projector until it has handled ``count`` records (applied or skipped), then stop
    it there (at the next chunk boundary; with chunks of one record, the other lanes' chunks
    in flight commit too)."""
    projector: BeliefProjector

    def stop_at_count(_: object) -> None:
        if projector.projected >= count:
            projector.stop()

    async def counted() -> bool:
        return projector.projected >= count

    projector = BeliefProjector(kafka, pool, on_outcome=stop_at_count, max_chunk=max_chunk)
    await _run_projector_while(projector, counted, timeout_s, f"{count} batches projected")


async def run_projector_until_applied(
    kafka: KafkaSettings,
    pool: asyncpg.Pool,
    *,
    runs: int,
    max_chunk: int = 1,
    lanes: int = DEFAULT_LANES,
    timeout_s: float = 60,
) -> None:
    """Run a projector until the database holds ``runs`` consolidation runs (every batch
    applied, however many a restart reads again and skips), then stop it.

    After a kill a partition's stored offset may lie below records its lanes did commit
    (:mod:`engram.projections.beliefs.lanes`): the next projector reads them again and skips them by their
    run ids, so counting what it handles says nothing about what is applied."""

    async def applied() -> bool:
        return await run_count(pool) >= runs

    projector = BeliefProjector(kafka, pool, max_chunk=max_chunk, lanes=lanes)
    await _run_projector_while(projector, applied, timeout_s, f"{runs} runs applied")


async def _run_projector_while(
    projector: BeliefProjector, done: Callable[[], Awaitable[bool]], timeout_s: float, what: str
) -> None:
    """Run ``projector`` until ``done()``, then stop it; raise what ended it early."""
    task = asyncio.create_task(projector.run())

    async def finished() -> bool:
        if task.done():
            task.result()
        return await done()

    try:
        await wait_until(finished, timeout_s=timeout_s, what=what)
    finally:
        projector.stop()
        await task


async def kill_projector_after(
    kafka: KafkaSettings,
    pool: asyncpg.Pool,
    *,
    count: int,
    max_chunk: int,
    lanes: int = DEFAULT_LANES,
) -> None:
    """Cancel a running projector mid-flight once it has projected ``count`` batches, wherever
    it is (inside a transaction or not): a kill, not a stop."""
    projector = BeliefProjector(kafka, pool, max_chunk=max_chunk, lanes=lanes)
    task = asyncio.create_task(projector.run())

    def reached() -> bool:
        assert not task.done(), "the projector stopped by itself"
        return projector.projected >= count

    await wait_until(reached, timeout_s=60, what=f"{count} batches projected", poll_s=0.001)
    task.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await task


async def seed_two_principals(kafka: KafkaSettings, pool: asyncpg.Pool, tenant: str) -> None:
    """One belief each for ana (Lisbon) and bo (Cork), projected by the real projector: the
    fixture of the isolation tests."""
    await project_all(
        kafka,
        pool,
        [
            batch_of(
                turn(tenant, "ana", "p", "I live in Lisbon.", seq=0),
                claim("I", "lives_in", "Lisbon", "I live in Lisbon"),
            ),
            batch_of(
                turn(tenant, "bo", "p", "I live in Cork.", seq=1),
                claim("I", "lives_in", "Cork", "I live in Cork"),
                offset=1,
            ),
        ],
    )


PARKED_EPISODE = uuid.UUID("00000000-0000-4000-8000-00000000beef")


async def seed_audit_story(kafka: KafkaSettings, pool: asyncpg.Pool, t: str) -> None:
    """ana moves Lisbon → Porto → Oslo over two sessions and two projects, states a preference
    in both projects (promoted to user scope), uses three tools and proposes an unmapped
    relation; bo, in a session of the same name, lives in Cork. One more episode of ana's
    session s3 is parked after three failed attempts."""
    prefer = claim("I", "prefers", "concise answers", "I prefer concise answers", facet="style")
    await project_all(
        kafka,
        pool,
        [
            batch_of(
                turn(
                    t,
                    "ana",
                    "garden",
                    "I live in Lisbon. I prefer concise answers. I dream of Mars.",
                    seq=0,
                    session="s1",
                ),
                claim("I", "lives_in", "Lisbon", "I live in Lisbon"),
                prefer,
                claim("I", "dreams_of", "Mars", "I dream of Mars"),
                offset=0,
            ),
            batch_of(
                turn(
                    t,
                    "ana",
                    "kitchen",
                    "I live in Porto. I prefer concise answers. I use Vim.",
                    seq=1,
                    session="s2",
                ),
                claim("I", "lives_in", "Porto", "I live in Porto"),
                prefer,
                claim("I", "uses", "Vim", "I use Vim"),
                offset=1,
            ),
            batch_of(
                turn(
                    t,
                    "ana",
                    "garden",
                    "I live in Oslo. I use Git. I use Make.",
                    seq=2,
                    session="s2",
                ),
                claim("I", "lives_in", "Oslo", "I live in Oslo"),
                claim("I", "uses", "Git", "I use Git"),
                claim("I", "uses", "Make", "I use Make"),
                offset=2,
            ),
            batch_of(
                turn(t, "bo", "garden", "I live in Cork. I dream of Venus.", seq=3, session="s1"),
                claim("I", "lives_in", "Cork", "I live in Cork"),
                claim("I", "dreams_of", "Venus", "I dream of Venus"),
                offset=3,
            ),
        ],
    )
    now = datetime.now(UTC)
    ana = principal_hash(t, "ana")
    parked = BacklogEntry("episodes", 0, 99, t, "garden", PARKED_EPISODE, now, now, ana, "s3")
    await record_pending_many(pool, [parked])
    for attempt in range(3):
        await record_failure(pool, parked, kind="model_timeout", park=attempt == 2)
