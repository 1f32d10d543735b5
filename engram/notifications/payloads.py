"""The body of each notification, built from an event and where it sits on the log: pure.

Every body is one of the models of :mod:`engram.schemas.webhooks`, whose fields are ids,
offsets, counts and times, so no statement, quote or message can reach a receiver through
them (``tests/unit/notifications/test_payloads.py`` feeds words in and finds none out). The
bytes made here are stored with the delivery and sent unchanged on every attempt: a retried
delivery is the same notification, signed afresh.
"""

from __future__ import annotations

import uuid
from datetime import datetime

from engram.schemas.memory_events import MemoryChanged, PrincipalErased
from engram.schemas.webhooks import (
    ForgottenNotice,
    ForgottenNotification,
    FormedThroughNotice,
    FormedThroughNotification,
    MemoryEventPosition,
    MemoryNotice,
    MemoryNotification,
    PingNotice,
    PingNotification,
)

_DELIVERY = uuid.UUID("0f4b9a51-7c1e-5d2a-8e36-9a4c2d7b1e05")
"""Namespace of delivery ids (the ``webhook-id`` header)."""
_FORMED = uuid.UUID("6a2e8c14-3b7d-5f90-a1c5-4d8e2b6f9a37")
"""Namespace of the ids of ``project.formed_through`` events."""


def delivery_id(endpoint_id: uuid.UUID, event_id: uuid.UUID) -> uuid.UUID:
    """The id of an event's delivery to one endpoint: a name of both, so a delivery written
    again (a replay, a second notifier) keeps the id a receiver deduplicates on."""
    return uuid.uuid5(_DELIVERY, f"{endpoint_id}/{event_id}")


def formed_event_id(tenant: str, project: str, formed_offset: int) -> uuid.UUID:
    return uuid.uuid5(_FORMED, f"{tenant}/{project}/{formed_offset}")


def memory_body(event: MemoryChanged, position: MemoryEventPosition, project: str) -> bytes:
    return (
        MemoryNotification(
            type=event.type,
            timestamp=event.occurred_at,
            data=MemoryNotice(
                event_id=event.event_id,
                tenant=event.tenant,
                principal=event.principal,
                project=project,
                belief_id=event.belief_id,
                log_position=position,
                occurred_at=event.occurred_at,
            ),
        )
        .model_dump_json()
        .encode()
    )


def forgotten_body(event: PrincipalErased, position: MemoryEventPosition) -> bytes:
    return (
        ForgottenNotification(
            timestamp=event.occurred_at,
            data=ForgottenNotice(
                event_id=event.event_id,
                tenant=event.tenant,
                principal_hash=event.principal_hash,
                log_position=position,
                occurred_at=event.occurred_at,
            ),
        )
        .model_dump_json()
        .encode()
    )


def formed_body(tenant: str, project: str, formed_offset: int, parked: int, at: datetime) -> bytes:
    return (
        FormedThroughNotification(
            timestamp=at,
            data=FormedThroughNotice(
                event_id=formed_event_id(tenant, project, formed_offset),
                tenant=tenant,
                project=project,
                formed_offset=formed_offset,
                parked=parked,
            ),
        )
        .model_dump_json()
        .encode()
    )


def ping_body(endpoint_id: uuid.UUID, tenant: str, project: str, at: datetime) -> bytes:
    return (
        PingNotification(
            timestamp=at, data=PingNotice(endpoint_id=endpoint_id, tenant=tenant, project=project)
        )
        .model_dump_json()
        .encode()
    )
