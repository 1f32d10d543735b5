"""Memory events: recorded in the outbox inside the projector's transaction (by the store, from
what resolution decided), published after by :func:`drain_outbox`.

The outbox makes publication at-least-once: a projector killed between its commit and its
publish finds the rows still unpublished on restart and sends them then.
"""

from __future__ import annotations

import asyncio

import asyncpg
from aiokafka import AIOKafkaProducer

from schemas.common import principal_key


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
