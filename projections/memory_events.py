"""Memory events: recorded in the outbox inside the projector's transaction, published after.

The outbox makes publication at-least-once: a projector killed between its commit and its
publish finds the rows still unpublished on restart and sends them then.
"""

from __future__ import annotations

import asyncio
import uuid

import asyncpg
import orjson
from aiokafka import AIOKafkaProducer

from formation.core import name_uuid
from projections.outcome import BatchOutcome
from schemas.claims import ClaimsBatchFormed
from schemas.common import principal_key
from schemas.memory_events import MemoryChanged, MemoryEventType


def memory_events(batch: ClaimsBatchFormed, outcome: BatchOutcome) -> list[MemoryChanged]:
    """The events one applied batch produced, in a stable order."""
    kinds: list[tuple[MemoryEventType, list[uuid.UUID]]] = [
        ("memory.formed", outcome.created),
        ("memory.reinforced", outcome.reinforced),
        ("memory.superseded", outcome.superseded),
        ("memory.conflicted", outcome.conflicted),
        ("memory.promoted", outcome.promoted),
    ]
    return [
        MemoryChanged(
            type=kind,
            event_id=name_uuid("memory-event", batch.batch_id, kind, belief_id),
            tenant=batch.tenant,
            principal=batch.principal,
            belief_id=belief_id,
            run_id=batch.batch_id,
            episode_id=batch.episode_id,
            occurred_at=batch.occurred_at,
            policy_version=batch.policy_version,
        )
        for kind, belief_ids in kinds
        for belief_id in belief_ids
    ]


async def record_in_outbox(conn: asyncpg.Connection, events: list[MemoryChanged]) -> None:
    if not events:
        return
    await conn.executemany(
        "INSERT INTO memory_event_outbox (event_id, tenant, principal, payload) "
        "VALUES ($1, $2, $3, $4::jsonb) ON CONFLICT (event_id) DO NOTHING",
        [
            (e.event_id, e.tenant, e.principal, orjson.dumps(e.model_dump(mode="json")).decode())
            for e in events
        ],
    )


async def drain_outbox(pool: asyncpg.Pool, producer: AIOKafkaProducer, topic: str) -> int:
    """Publish every pending event in order, marking them published once Kafka acks them all.

    The sends are queued together and awaited together: the idempotent producer keeps them in
    order within a partition (one principal's events share one), and a failure leaves every row
    unpublished, to be sent again (consumers dedupe by ``event_id``)."""
    rows = await pool.fetch(
        "SELECT event_id, tenant, principal, payload::text AS payload FROM memory_event_outbox "
        "WHERE published_at IS NULL ORDER BY sequence LIMIT 1000"
    )
    acks = [
        await producer.send(
            topic, row["payload"].encode(), key=principal_key(row["tenant"], row["principal"])
        )
        for row in rows
    ]
    await asyncio.gather(*acks)
    if rows:
        await pool.execute(
            "UPDATE memory_event_outbox SET published_at = now() WHERE event_id = ANY($1)",
            [row["event_id"] for row in rows],
        )
    return len(rows)
