"""Endpoints as the API answers and the CLI prints them (``engram.schemas.api``); deliveries are
listed in that shape already (``queue.list_deliveries``)."""

from __future__ import annotations

from engram.notifications.endpoints import Endpoint
from engram.schemas.api import WebhookCreated, WebhookEndpoint


def endpoint_view(endpoint: Endpoint) -> WebhookEndpoint:
    return WebhookEndpoint(
        id=endpoint.endpoint_id,
        tenant=endpoint.tenant,
        project=endpoint.project,
        url=endpoint.url,
        events=endpoint.events,
        created_at=endpoint.created_at,
        disabled_at=endpoint.disabled_at,
        disabled_reason=endpoint.disabled_reason,
        secrets=endpoint.secrets,
    )


def created_view(endpoint: Endpoint, secret: str) -> WebhookCreated:
    return WebhookCreated(**endpoint_view(endpoint).model_dump(), secret=secret)
