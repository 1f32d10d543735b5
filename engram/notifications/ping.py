"""``engram webhooks test``: one signed ``webhook.test`` notification to an endpoint, now.

Sent through the same checks, signature and transport as every delivery, but not queued: the
operator sees the receiver's answer at once, and nothing is retried or recorded.
"""

from __future__ import annotations

import uuid
from datetime import UTC, datetime

import asyncpg

from engram.infra.settings import WebhooksSettings
from engram.notifications.destinations import DestinationPolicy
from engram.notifications.endpoints import find_endpoint
from engram.notifications.payloads import ping_body
from engram.notifications.queue import Failure
from engram.notifications.sending import Sender
from engram.notifications.transport import HttpTransport
from engram.notifications.vault import SecretVault


async def ping(
    db: asyncpg.Pool | asyncpg.Connection,
    vault: SecretVault,
    settings: WebhooksSettings,
    *,
    tenant: str,
    endpoint_id: uuid.UUID,
) -> tuple[int | None, Failure | None]:
    """The receiver's status (None without an answer) and the failure (None: delivered)."""
    endpoint = await find_endpoint(db, tenant=tenant, endpoint_id=endpoint_id)
    keys = await vault.signing_keys(db, tenant=tenant, endpoint_id=endpoint_id)
    body = ping_body(endpoint.endpoint_id, tenant, endpoint.project, datetime.now(UTC))
    transport = HttpTransport(settings.timeout_s)
    try:
        return await Sender(DestinationPolicy(settings), transport).send(
            url=endpoint.url, message_id=uuid.uuid4(), body=body, keys=keys
        )
    finally:
        await transport.close()
