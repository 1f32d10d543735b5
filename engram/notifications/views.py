"""Endpoints and deliveries as the API answers and the CLI prints them (``schemas.api``)."""

from __future__ import annotations

from engram.notifications.endpoints import Endpoint
from engram.notifications.queue import Delivery
from engram.schemas.api import WebhookCreated, WebhookDelivery, WebhookEndpoint


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


def delivery_view(delivery: Delivery) -> WebhookDelivery:
    return WebhookDelivery(
        id=delivery.delivery_id,
        endpoint_id=delivery.endpoint_id,
        project=delivery.project,
        type=delivery.event_type,
        event_id=delivery.event_id,
        state=delivery.state,
        attempts=delivery.attempts,
        next_attempt_at=delivery.next_attempt_at,
        last_status=delivery.last_status,
        last_error=delivery.last_error,
        created_at=delivery.created_at,
        delivered_at=delivery.delivered_at,
        parked_at=delivery.parked_at,
    )
