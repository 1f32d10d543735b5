"""Endpoints: registered per project of a tenant, listed without their secrets, removed,
re-enabled, their secret rotated. Every statement names the tenant: an endpoint of another
tenant is the same answer as none (:class:`UnknownEndpoint`)."""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import get_args

import asyncpg

from engram.notifications.destinations import (
    DestinationPolicy,
    checked_addresses,
    parse_destination,
)
from engram.notifications.errors import UnknownEndpoint, UnknownNotificationType
from engram.notifications.signing import new_secret, secret_text
from engram.notifications.vault import SecretVault, expire_current
from engram.schemas.webhooks import NotificationType

EVERY_TYPE: tuple[str, ...] = get_args(NotificationType)


@dataclass(frozen=True)
class Endpoint:
    endpoint_id: uuid.UUID
    tenant: str
    project: str
    url: str
    events: list[str]
    created_at: datetime
    disabled_at: datetime | None
    disabled_reason: str | None
    secrets: int


_SELECT = """
SELECT e.endpoint_id, e.tenant, e.project, e.url, e.events, e.created_at, e.disabled_at,
       e.disabled_reason,
       (SELECT count(*) FROM public.webhook_secret s WHERE s.endpoint_id = e.endpoint_id
          AND (s.expires_at IS NULL OR s.expires_at > now()))::int AS secrets
FROM public.webhook_endpoint e
"""


def _endpoint(row: asyncpg.Record) -> Endpoint:
    return Endpoint(**dict(row))


def chosen_events(events: Sequence[str] | None) -> list[str]:
    """The kinds an endpoint subscribes to, in the contract's order; all when none is named."""
    if not events:
        return list(EVERY_TYPE)
    unknown = sorted(set(events) - set(EVERY_TYPE))
    if unknown:
        raise UnknownNotificationType(
            f"unknown notification type(s) {unknown}; known: {', '.join(EVERY_TYPE)}"
        )
    return [kind for kind in EVERY_TYPE if kind in events]


async def register(
    conn: asyncpg.Connection,
    vault: SecretVault,
    policy: DestinationPolicy,
    *,
    tenant: str,
    project: str,
    url: str,
    events: Sequence[str] | None = None,
) -> tuple[Endpoint, str]:
    """A new endpoint and its signing secret (``whsec_…``), which is returned here only.
    The URL is refused (:class:`DestinationRefused`) before anything is stored if it, or an
    address its host resolves to now, breaks the destination rules."""
    destination = parse_destination(url)
    await checked_addresses(policy, destination)
    kinds = chosen_events(events)
    endpoint_id = uuid.uuid4()
    secret = new_secret()
    async with conn.transaction():
        await conn.execute(
            "INSERT INTO public.webhook_endpoint (endpoint_id, tenant, project, url, events) "
            "VALUES ($1, $2, $3, $4, $5)",
            endpoint_id,
            tenant,
            project,
            destination.url,
            kinds,
        )
        await vault.store(conn, tenant=tenant, endpoint_id=endpoint_id, version=1, secret=secret)
        endpoint = await find_endpoint(conn, tenant=tenant, endpoint_id=endpoint_id)
    return endpoint, secret_text(secret)


async def find_endpoint(
    db: asyncpg.Pool | asyncpg.Connection, *, tenant: str, endpoint_id: uuid.UUID
) -> Endpoint:
    row = await db.fetchrow(
        _SELECT + "WHERE e.tenant = $1 AND e.endpoint_id = $2", tenant, endpoint_id
    )
    if row is None:
        raise UnknownEndpoint(f"no webhook endpoint {endpoint_id} in tenant {tenant}")
    return _endpoint(row)


async def list_endpoints(
    db: asyncpg.Pool | asyncpg.Connection, *, tenant: str, project: str | None = None
) -> list[Endpoint]:
    rows = await db.fetch(
        _SELECT + "WHERE e.tenant = $1 AND ($2::text IS NULL OR e.project = $2) "
        "ORDER BY e.project, e.created_at, e.endpoint_id",
        tenant,
        project,
    )
    return [_endpoint(row) for row in rows]


async def remove_endpoint(
    db: asyncpg.Pool | asyncpg.Connection, *, tenant: str, endpoint_id: uuid.UUID
) -> None:
    """Delete the endpoint, its secrets and every delivery owed to it."""
    deleted = await db.fetchval(
        "DELETE FROM public.webhook_endpoint WHERE tenant = $1 AND endpoint_id = $2 "
        "RETURNING endpoint_id",
        tenant,
        endpoint_id,
    )
    if deleted is None:
        raise UnknownEndpoint(f"no webhook endpoint {endpoint_id} in tenant {tenant}")


async def rotate_secret(
    conn: asyncpg.Connection,
    vault: SecretVault,
    *,
    tenant: str,
    endpoint_id: uuid.UUID,
    overlap_s: float,
) -> tuple[str, datetime | None]:
    """A new secret for the endpoint (returned here only); the one it replaces signs too for
    ``overlap_s`` more seconds. Returns the new secret and when the old one stops signing."""
    async with conn.transaction():
        locked = await conn.fetchval(
            "SELECT endpoint_id FROM public.webhook_endpoint WHERE tenant = $1 "
            "AND endpoint_id = $2 FOR UPDATE",
            tenant,
            endpoint_id,
        )
        if locked is None:
            raise UnknownEndpoint(f"no webhook endpoint {endpoint_id} in tenant {tenant}")
        version, previous_until = await expire_current(conn, endpoint_id, overlap_s=overlap_s)
        secret = new_secret()
        await vault.store(
            conn, tenant=tenant, endpoint_id=endpoint_id, version=version, secret=secret
        )
    return secret_text(secret), previous_until


async def enable_endpoint(
    db: asyncpg.Pool | asyncpg.Connection, *, tenant: str, endpoint_id: uuid.UUID
) -> None:
    """Enable a disabled endpoint again, with a clean count of failures."""
    enabled = await db.fetchval(
        "UPDATE public.webhook_endpoint SET disabled_at = NULL, disabled_reason = NULL, "
        "consecutive_failures = 0, failing_since = NULL WHERE tenant = $1 AND endpoint_id = $2 "
        "RETURNING endpoint_id",
        tenant,
        endpoint_id,
    )
    if enabled is None:
        raise UnknownEndpoint(f"no webhook endpoint {endpoint_id} in tenant {tenant}")
