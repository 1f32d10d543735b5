"""Building blocks of the notification tests: a vault with a fresh KEK, endpoints registered on
loopback, memory events owed through the sink, notifiers run as tasks of the test's loop."""

from __future__ import annotations

import asyncio
import contextlib
import secrets
import uuid
from collections.abc import AsyncIterator, Sequence
from datetime import UTC, datetime

import asyncpg

from engram.infra.settings import WebhooksSettings
from engram.keys.kek import LocalKek
from engram.notifications import MemoryRecord
from engram.notifications.destinations import DestinationPolicy
from engram.notifications.endpoints import Endpoint, register
from engram.notifications.notifier import Notifier
from engram.notifications.vault import SecretVault
from engram.projections.following import Batch
from engram.projections.notifying import owe_batch
from engram.schemas.memory_events import MemoryChanged, PrincipalErased

TOPIC = "engram.memory-events"
LOOPBACK = WebhooksSettings(allow_private=True, poll_s=0.05, timeout_s=2.0, lease_s=3.0)


def new_vault() -> SecretVault:
    return SecretVault(LocalKek(secrets.token_bytes(32)))


async def add_endpoint(
    pool: asyncpg.Pool,
    vault: SecretVault,
    url: str,
    *,
    tenant: str = "t",
    project: str = "garden",
    events: Sequence[str] | None = None,
    settings: WebhooksSettings = LOOPBACK,
) -> tuple[Endpoint, str]:
    async with pool.acquire() as conn:
        return await register(
            conn,
            vault,
            DestinationPolicy(settings),
            tenant=tenant,
            project=project,
            url=url,
            events=events,
        )


def changed(
    n: int,
    *,
    tenant: str = "t",
    principal: str = "ana",
    project: str = "garden",
    kind: str = "memory.formed",
) -> MemoryChanged:
    return MemoryChanged(
        type=kind,
        event_id=uuid.uuid5(uuid.NAMESPACE_URL, f"test-event/{tenant}/{n}"),
        tenant=tenant,
        principal=principal,
        belief_id=uuid.uuid5(uuid.NAMESPACE_URL, f"test-belief/{n}"),
        run_id=uuid.UUID(int=n),
        episode_id=uuid.UUID(int=n),
        occurred_at=datetime.now(UTC),
        policy_version="formation@1",
        project=project,
    )


async def owe(
    pool: asyncpg.Pool,
    events: Sequence[MemoryChanged | PrincipalErased],
    *,
    first_offset: int = 0,
    partition: int = 0,
) -> int:
    """The sink's write, given ``events`` as one partition's records published now."""
    now_ms = int(datetime.now(UTC).timestamp() * 1000)
    records = [
        MemoryRecord(TOPIC, partition, first_offset + i, now_ms, event)
        for i, event in enumerate(events)
    ]
    async with pool.acquire() as conn:
        return await owe_batch(
            conn, Batch(TOPIC, partition, records, next_offset=first_offset + len(records))
        )


@contextlib.asynccontextmanager
async def notifying(
    pool: asyncpg.Pool, vault: SecretVault, settings: WebhooksSettings = LOOPBACK
) -> AsyncIterator[Notifier]:
    """A notifier sending until the block ends."""
    notifier = Notifier(settings, pool, vault)
    task = asyncio.create_task(notifier.run())
    try:
        yield notifier
    finally:
        notifier.stop()
        await task


async def states(pool: asyncpg.Pool) -> dict[str, int]:
    rows = await pool.fetch("SELECT state, count(*)::int AS n FROM webhook_delivery GROUP BY state")
    return {row["state"]: row["n"] for row in rows}
