"""``engram projector``, ``engram indexer`` and ``engram embedder``: the belief projector and the
followers of the episodic log as processes of their own, or as tasks of another process's loop
(``engram worker``, ``engram rederive``).

``engram worker`` runs formation and projection on one event loop, and the message index and
the vectors behind one follower of the episodic log (one fetch and one opening per record for
both); on a machine with cores to spare, ``engram worker --no-projector`` plus ``engram
projector`` gives each stage a process, and each scales with the partitions of its own topic.
SIGINT or SIGTERM stop a process of its own between fetches.
"""

from __future__ import annotations

import asyncpg

from engram.infra.db import create_pool, retry_while_unavailable
from engram.infra.health import Stage, run_stage_alone
from engram.infra.heap import collect_young_less_often, freeze_startup_heap
from engram.infra.settings import EmbeddingSettings, Settings
from engram.notifications.vault import SecretVault
from engram.projections.beliefs.projector import BeliefProjector
from engram.projections.following import LogFollower
from engram.projections.messages.embedding_follower import MessageVectors
from engram.projections.messages.embeddings.wiring import embedder_from_settings
from engram.projections.messages.indexer import MessageIndex
from engram.projections.messages.reading import follow_messages
from engram.projections.messages.store import LogEntry
from engram.projections.notifying import NotifierStage
from engram.sealing.opening import open_sealer


async def projector_pool(settings: Settings, *, schema: str | None = None) -> asyncpg.Pool:
    """The projector's own pool, once the database answers. Its connections are not reset on
    release (``stateless_sessions``): the projector's statements leave no session state behind
    (``tests/integration/test_projector_session_state.py``), and the reset was a round trip on
    every release, about five a chunk (the chunk's transaction and the outbox drains)."""
    return await retry_while_unavailable(
        lambda: create_pool(
            settings.database, role="engram-projector", schema=schema, stateless_sessions=True
        ),
        what="projector.connect",
    )


async def run_projector(settings: Settings, *, schema: str | None = None) -> None:
    pool = await projector_pool(settings, schema=schema)
    projector = BeliefProjector(
        settings.kafka,
        pool,
        lanes=settings.worker.projector_lanes,
        sealer=await open_sealer(settings.keys, pool),
    )
    freeze_startup_heap()
    collect_young_less_often()  # a process of its own: only the projector's chunks to collect
    await _run_alone(projector, pool, settings)


async def project_in_worker(settings: Settings, *, schema: str | None = None) -> None:
    """The belief projector as a task of another process's loop (``engram worker``, ``engram
    rederive``): that process owns signals and health; the task ends when it is cancelled.
    ``schema`` is the generation it projects into (None: ``public``)."""
    pool = await projector_pool(settings, schema=schema)
    try:
        sealer = await open_sealer(settings.keys, pool)
        await BeliefProjector(
            settings.kafka, pool, lanes=settings.worker.projector_lanes, sealer=sealer
        ).run()
    finally:
        await pool.close()


async def _run_alone(stage: Stage, pool: asyncpg.Pool, settings: Settings) -> None:
    """A stage as the whole process (:func:`infra.health.run_stage_alone`); its pool closes
    when it ends."""
    try:
        await run_stage_alone(stage, host=settings.worker.http_host, port=settings.worker.http_port)
    finally:
        await pool.close()


async def messages_pool(
    settings: Settings, *, role: str, schema: str | None = None
) -> asyncpg.Pool:
    """The pool of a follower of the episodic log, once the database answers. ``schema`` is
    the live projection generation: the index it writes, and the hidden messages the vectors
    leave out (vectors are shared by every generation)."""
    return await retry_while_unavailable(
        lambda: create_pool(settings.database, role=role, schema=schema),
        what=f"{role}.connect",
    )


async def messages_follower(
    settings: Settings, pool: asyncpg.Pool, *, index: bool, embed: bool
) -> LogFollower[LogEntry]:
    """One follower of the episodic log for the index, the vectors, or both (the embedder
    is loaded here, off the formation path)."""
    if not index and not embed:
        raise ValueError("a follower of the log's messages needs the index, the vectors or both")
    sinks: list[MessageIndex | MessageVectors] = []
    if index:
        sinks.append(MessageIndex(pool))
    if embed:
        embedder = embedder_from_settings(settings.embedding)
        sinks.append(MessageVectors(pool, embedder, set(settings.embedding.roles)))
    return follow_messages(settings.kafka, sinks, await open_sealer(settings.keys, pool))


async def run_messages(
    settings: Settings, *, index: bool, embed: bool, schema: str | None = None
) -> None:
    """``engram indexer`` (the index), ``engram embedder`` (the vectors): a follower of the
    log's messages as a process of its own, stopped between fetches by SIGINT or SIGTERM,
    serving health like the projector."""
    role = "engram-indexer" if index else "engram-embedder"
    pool = await messages_pool(settings, role=role, schema=schema)
    await _run_alone(
        await messages_follower(settings, pool, index=index, embed=embed), pool, settings
    )


def keeps_the_index_pace(embedding: EmbeddingSettings) -> bool:
    """Whether the configured embedder keeps the message index's pace, so that one follower
    can serve both. A follower hands each fetch to its sinks side by side, so its slowest sink
    paces the others: the light local model (WordLlama, about 0.1 ms of CPU a message) keeps up
    with the index; the contextual default (multilingual-e5-small, 40 to 60 ms a message on a CPU)
    or a remote endpoint would hold the index — and recall's lexical list — to a few dozen turns
    a second (docs/benchmarks.md, "One log follower"), so the vectors get a follower of their
    own and fall behind alone."""
    return embedding.provider == "local" and embedding.local_model == "wordllama"


def embeds_in_a_child(settings: Settings, *, embed: bool) -> bool:
    """Whether ``engram worker`` makes the vectors in a child process (``engram embedder``,
    started and stopped with it) rather than on its own event loop: by default, whenever the
    embedder would not keep the index's pace. On a 2-core machine the contextual model in
    the worker's interpreter halved its formation rate (docs/benchmarks.md, "The message index
    and the vectors"); a process of its own, niced, leaves formation its pace and the vectors
    lag instead. ``ENGRAM_EMBEDDING_IN_WORKER=true`` keeps it in the worker."""
    return (
        embed and not settings.embedding.in_worker and not keeps_the_index_pace(settings.embedding)
    )


def message_followers(settings: Settings, *, index: bool, embed: bool) -> list[tuple[bool, bool]]:
    """The followers of the log's messages a process runs, as (index, embed) each: one for both
    when the embedder keeps the index's pace (one fetch and one opening of each record), else
    one each; none for the vectors when they are made in a child process
    (:func:`embeds_in_a_child`)."""
    if embeds_in_a_child(settings, embed=embed):
        embed = False
    if index and embed and not keeps_the_index_pace(settings.embedding):
        return [(True, False), (False, True)]
    return [(index, embed)] if index or embed else []


async def follow_messages_in_worker(
    settings: Settings, *, index: bool, embed: bool, schema: str | None = None
) -> None:
    """The follower of the log's messages as a task of another process's loop (``engram
    worker`` with both sinks, ``engram rederive`` with the index alone), like
    :func:`project_in_worker`: its own pool, its own consumer group, so formation and the
    projector never wait for it."""
    pool = await messages_pool(settings, role="engram-messages", schema=schema)
    try:
        await (await messages_follower(settings, pool, index=index, embed=embed)).run()
    finally:
        await pool.close()


async def notifier_pool(settings: Settings, *, schema: str | None = None) -> asyncpg.Pool:
    """The notifier's own pool, once the database answers: a connection per attempt in flight
    settles its outcome, and the follower's transaction takes one more."""
    return await retry_while_unavailable(
        lambda: create_pool(settings.database, role="engram-notifier", schema=schema),
        what="notifier.connect",
    )


async def run_notifier(settings: Settings, *, schema: str | None = None) -> None:
    """``engram notifier``: the notifier as a process of its own, stopped by SIGINT or SIGTERM
    (attempts under way finish first), serving health like the indexer. ``schema`` is the live
    projection generation (whose forgotten principals it leaves out)."""
    vault = SecretVault.from_settings(settings.keys)
    pool = await notifier_pool(settings, schema=schema)
    stage = NotifierStage.build(settings.kafka, settings.webhooks, pool, vault)
    await _run_alone(stage, pool, settings)


async def notify_in_worker(settings: Settings, *, schema: str | None = None) -> None:
    """The notifier as a task of ``engram worker``'s loop: its own pool and consumer group;
    formation never waits for it, and it never sends inside a transaction that forms."""
    vault = SecretVault.from_settings(settings.keys)
    pool = await notifier_pool(settings, schema=schema)
    try:
        await NotifierStage.build(settings.kafka, settings.webhooks, pool, vault).run()
    finally:
        await pool.close()
