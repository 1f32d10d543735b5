"""What the notifier's sink writes: memory events in, the deliveries they owe out, in the
caller's transaction.

Given one partition's decoded records of ``engram.memory-events`` and an open transaction, it
writes a delivery for every enabled endpoint that is owed each event; the log follower that
drives the sink (``engram.projections.notifying``) stores the offset after them in the same
transaction, so a restart resumes exactly after what was written, and a record read twice owes
nothing twice (a delivery's key is its endpoint and event). Who is owed:

- a ``memory.*`` event: the endpoints of the event's tenant and project that subscribe to its
  kind, unless the principal has been forgotten since (a forgetting drops what was owed for
  them, and events still on the topic behind it are not owed again);
- ``principal.forgotten``: every endpoint of the tenant that subscribes to it, whatever its
  project (a forgetting reaches every project of the principal);
- only endpoints registered before the event was published (its record's timestamp), so an
  endpoint is not sent history it never asked for when the notifier is behind.

Nothing here sends: senders claim what this wrote (:mod:`engram.notifications.queue`), outside
this transaction and any other that forms.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime

import asyncpg

from engram.notifications.payloads import delivery_id, forgotten_body, memory_body
from engram.schemas.common import PSEUDONYMOUS, principal_hash
from engram.schemas.memory_events import MemoryChanged, PrincipalErased
from engram.schemas.webhooks import FORGOTTEN, MemoryEventPosition

SINK = "notifications"
"""The sink's name: what it is called in logs and by the follower that drives it."""


@dataclass(frozen=True)
class MemoryRecord:
    """One decoded record of the memory-events topic, with where and when it was written."""

    topic: str
    partition: int
    offset: int
    timestamp_ms: int
    event: MemoryChanged | PrincipalErased

    @property
    def position(self) -> MemoryEventPosition:
        return MemoryEventPosition(topic=self.topic, partition=self.partition, offset=self.offset)

    @property
    def published_at(self) -> datetime:
        return datetime.fromtimestamp(self.timestamp_ms / 1000, UTC)


@dataclass(frozen=True)
class _Endpoint:
    endpoint_id: uuid.UUID
    tenant: str
    project: str
    events: frozenset[str]
    created_at: datetime


@dataclass(frozen=True)
class Owed:
    endpoint_id: uuid.UUID
    tenant: str
    project: str
    principal: str | None
    """Whom a memory event is about (None for a forgetting: its notice names no one)."""
    event_type: str
    event_id: uuid.UUID
    payload: bytes


async def record_owed(conn: asyncpg.Connection, records: Sequence[MemoryRecord]) -> int:
    """Write what ``records`` owe in ``conn``'s open transaction; the deliveries written.
    ``records`` are one partition's decoded records in log order (a record that did not decode
    owes nothing and is left out by the caller). Where the partition was read to is stored by
    whoever opened the transaction (the notifier's log follower, ``engram.projections.notifying``)."""
    records = await _named(conn, records)
    owed = owed_by(records, await _endpoints(conn, records), await _forgotten(conn, records))
    return await _insert(conn, owed)


def owed_by(
    records: Sequence[MemoryRecord],
    endpoints: Sequence[_Endpoint],
    forgotten: set[tuple[str, str]],
) -> list[Owed]:
    """What each record owes each endpoint, in record order (pure)."""
    owed: list[Owed] = []
    for record in records:
        event = record.event
        principal: str | None = None
        if isinstance(event, MemoryChanged):
            if event.project is None or (event.tenant, event.principal) in forgotten:
                continue  # an event from before projects were named on it routes nowhere
            body, principal = memory_body(event, record.position, event.project), event.principal
        else:
            body = forgotten_body(event, record.position)
        for endpoint in endpoints:
            if _owes(endpoint, record):
                owed.append(
                    Owed(
                        endpoint.endpoint_id,
                        event.tenant,
                        endpoint.project,
                        principal,
                        event.type,
                        event.event_id,
                        body,
                    )
                )
    return owed


def _owes(endpoint: _Endpoint, record: MemoryRecord) -> bool:
    event = record.event
    if endpoint.tenant != event.tenant or event.type not in endpoint.events:
        return False
    if endpoint.created_at > record.published_at:
        return False
    return event.type == FORGOTTEN or endpoint.project == getattr(event, "project", None)


async def _endpoints(conn: asyncpg.Connection, records: Sequence[MemoryRecord]) -> list[_Endpoint]:
    tenants = sorted({r.event.tenant for r in records})
    if not tenants:
        return []
    rows = await conn.fetch(
        "SELECT endpoint_id, tenant, project, events, created_at FROM public.webhook_endpoint "
        "WHERE tenant = ANY($1::text[]) AND disabled_at IS NULL ORDER BY endpoint_id",
        tenants,
    )
    return [
        _Endpoint(
            r["endpoint_id"], r["tenant"], r["project"], frozenset(r["events"]), r["created_at"]
        )
        for r in rows
    ]


async def _named(conn: asyncpg.Connection, records: Sequence[MemoryRecord]) -> list[MemoryRecord]:
    """``records`` with each memory event naming its principal: one that names a pseudonym
    (version 2) is mapped back through the principal's data key row, which only lives as long
    as they are not forgotten; one whose pseudonym maps to nobody any more is left out — its
    principal was forgotten, and a forgotten principal's events owe nothing."""
    pseudonymous = sorted(
        {
            (r.event.tenant, r.event.principal)
            for r in records
            if isinstance(r.event, MemoryChanged) and r.event.schema_version == PSEUDONYMOUS
        }
    )
    if not pseudonymous:
        return list(records)
    rows = await conn.fetch(
        "SELECT k.tenant, k.pseudonym, k.principal FROM public.data_key k "
        "JOIN unnest($1::text[], $2::text[]) AS w(tenant, pseudonym) "
        "ON k.tenant = w.tenant AND k.pseudonym = w.pseudonym",
        [tenant for tenant, _ in pseudonymous],
        [pseudonym for _, pseudonym in pseudonymous],
    )
    principals = {(r["tenant"], r["pseudonym"]): r["principal"] for r in rows}
    named = []
    for record in records:
        event = record.event
        if isinstance(event, MemoryChanged) and event.schema_version == PSEUDONYMOUS:
            principal = principals.get((event.tenant, event.principal))
            if principal is None:
                continue
            event = event.model_copy(update={"principal": principal, "schema_version": 1})
            record = replace(record, event=event)
        named.append(record)
    return named


async def _forgotten(
    conn: asyncpg.Connection, records: Sequence[MemoryRecord]
) -> set[tuple[str, str]]:
    """The principals of ``records``' memory events who have been forgotten (their tombstone,
    by hash, in the projection the notifier's pool reads)."""
    who = {
        (r.event.tenant, r.event.principal) for r in records if isinstance(r.event, MemoryChanged)
    }
    if not who:
        return set()
    by_hash = {principal_hash(t, p): (t, p) for t, p in who}
    rows = await conn.fetch(
        "SELECT principal_hash FROM principal_tombstone WHERE principal_hash = ANY($1::text[]) "
        "UNION SELECT principal_hash FROM public.principal_forgotten "
        "WHERE principal_hash = ANY($1::text[])",
        list(by_hash),
    )
    return {by_hash[row["principal_hash"]] for row in rows}


async def _insert(conn: asyncpg.Connection, owed: Sequence[Owed]) -> int:
    """Insert in order (each endpoint's deliveries are sent in the order of their sequence);
    a delivery already written keeps its row."""
    if not owed:
        return 0
    written = await conn.fetch(
        """
        INSERT INTO public.webhook_delivery
            (delivery_id, endpoint_id, tenant, project, principal, event_type, event_id, payload)
        SELECT o.delivery_id, o.endpoint_id, o.tenant, o.project, o.principal, o.event_type,
               o.event_id, o.payload
        FROM unnest($1::uuid[], $2::uuid[], $3::text[], $4::text[], $5::text[], $6::text[],
                    $7::uuid[], $8::text[])
             WITH ORDINALITY AS o(delivery_id, endpoint_id, tenant, project, principal,
                                  event_type, event_id, payload, position)
        ORDER BY o.position
        ON CONFLICT DO NOTHING
        RETURNING sequence
        """,
        [delivery_id(o.endpoint_id, o.event_id) for o in owed],
        [o.endpoint_id for o in owed],
        [o.tenant for o in owed],
        [o.project for o in owed],
        [o.principal for o in owed],
        [o.event_type for o in owed],
        [o.event_id for o in owed],
        [o.payload.decode() for o in owed],
    )
    return len(written)
