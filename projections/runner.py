"""``engram projector``, ``engram indexer`` and ``engram embedder``: the belief projector, the
message indexer and the embedding follower as processes of their own, or as tasks of another process's loop (``engram worker``).

``engram worker`` runs formation and projection on one event loop; on a machine with cores to
spare, ``engram worker --no-projector`` plus ``engram projector`` gives each stage a process,
and each scales with the partitions of its own topic. SIGINT or SIGTERM stop it between chunks.
"""

from __future__ import annotations

import asyncpg

from engram.infra.db import create_pool, retry_while_unavailable
from engram.infra.health import Stage, run_stage_alone
from engram.infra.heap import collect_young_less_often, freeze_startup_heap
from engram.infra.settings import Settings
from engram.notifications.vault import SecretVault
from engram.projections.beliefs.projector import BeliefProjector
from engram.projections.messages.embedding_follower import EmbeddingFollower
from engram.projections.messages.embeddings.wiring import embedder_from_settings
from engram.projections.messages.indexer import MessageIndexer
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


async def run_indexer(settings: Settings, *, schema: str | None = None) -> None:
    """``engram indexer``: the message indexer as a process of its own, stopped between
    fetches by SIGINT or SIGTERM, serving health like the projector."""
    pool = await indexer_pool(settings, schema=schema)
    sealer = await open_sealer(settings.keys, pool)
    await _run_alone(MessageIndexer(settings.kafka, pool, sealer), pool, settings)


async def _run_alone(stage: Stage, pool: asyncpg.Pool, settings: Settings) -> None:
    """A stage as the whole process (:func:`infra.health.run_stage_alone`); its pool closes
    when it ends."""
    try:
        await run_stage_alone(stage, host=settings.worker.http_host, port=settings.worker.http_port)
    finally:
        await pool.close()


async def indexer_pool(settings: Settings, *, schema: str | None = None) -> asyncpg.Pool:
    """The indexer's own pool, once the database answers."""
    return await retry_while_unavailable(
        lambda: create_pool(settings.database, role="engram-indexer", schema=schema),
        what="indexer.connect",
    )


async def index_in_worker(settings: Settings, *, schema: str | None = None) -> None:
    """The message indexer as a task of another process's loop (``engram worker``, ``engram
    rederive``), like :func:`project_in_worker`: its own pool, its own consumer group, so
    formation and the projector never wait for it."""
    pool = await indexer_pool(settings, schema=schema)
    try:
        sealer = await open_sealer(settings.keys, pool)
        await MessageIndexer(settings.kafka, pool, sealer).run()
    finally:
        await pool.close()


async def embedder_pool(settings: Settings, *, schema: str | None = None) -> asyncpg.Pool:
    """The embedding follower's own pool, once the database answers."""
    return await retry_while_unavailable(
        lambda: create_pool(settings.database, role="engram-embedder", schema=schema),
        what="embedder.connect",
    )


async def _follower(settings: Settings, pool: asyncpg.Pool) -> EmbeddingFollower:
    """The follower of the generation the settings name (the embedder is loaded here, off the
    formation path)."""
    embedder = embedder_from_settings(settings.embedding)
    return EmbeddingFollower(settings.kafka, pool, embedder, await open_sealer(settings.keys, pool))


async def run_embedder(settings: Settings, *, schema: str | None = None) -> None:
    """``engram embedder``: the embedding follower as a process of its own, stopped between
    fetches by SIGINT or SIGTERM, serving health like the indexer. ``schema`` is the live
    projection generation, whose hidden messages it leaves out (vectors are shared)."""
    pool = await embedder_pool(settings, schema=schema)
    await _run_alone(await _follower(settings, pool), pool, settings)


async def embed_in_worker(settings: Settings, *, schema: str | None = None) -> None:
    """The embedding follower as a task of ``engram worker``'s loop, like
    :func:`index_in_worker`: its own pool and consumer group, so nothing waits for it."""
    pool = await embedder_pool(settings, schema=schema)
    try:
        await (await _follower(settings, pool)).run()
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
