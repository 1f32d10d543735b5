"""``/v1/webhooks``: a tenant's operator registers, lists and removes the endpoints its projects'
notifications go to, rotates their secrets and lists their deliveries (docs/notifications.md).

Only the tenant's operator token reaches these routes (a principal's token is 403: endpoints
see every principal of a project); the tenant is the token's, and an endpoint of another tenant
is 404 like one that does not exist. A secret is in the answer that makes it, and nowhere else.
"""

from __future__ import annotations

import uuid
from typing import Annotated, Any

from fastapi import APIRouter, Depends, HTTPException, Query, Request, Response

from engram.notifications.destinations import DestinationPolicy
from engram.notifications.endpoints import (
    find_endpoint,
    list_endpoints,
    register,
    remove_endpoint,
    rotate_secret,
)
from engram.notifications.errors import SecretsUnavailable
from engram.notifications.queue import list_deliveries
from engram.notifications.vault import SecretVault
from engram.notifications.views import created_view, endpoint_view
from engram.schemas.api import (
    Problem,
    WebhookCreated,
    WebhookDeliveries,
    WebhookEndpoints,
    WebhookRegistration,
    WebhookSecretRotated,
)
from engram.web.auth import Calling, NameQuery
from engram.web.json_body import JsonRoute

router = APIRouter(tags=["webhooks"], route_class=JsonRoute)
ERRORS: dict[int | str, dict[str, Any]] = {
    code: {"model": Problem} for code in (401, 403, 404, 422, 503)
}


def _operator_tenant(calling: Calling, tenant: NameQuery = None) -> str:
    grant = calling.grant
    if grant is not None and not grant.operator:
        raise HTTPException(403, "webhooks need the tenant's operator token")
    return calling.tenant(tenant)


OperatorTenant = Annotated[str, Depends(_operator_tenant)]


def _vault(request: Request) -> SecretVault:
    vault: SecretVault | None = request.app.state.webhook_vault
    if vault is None:
        raise SecretsUnavailable(
            "webhooks need a key-encryption key: signing secrets are stored only wrapped by "
            "ENGRAM_KEYS_KEK (or the file ENGRAM_KEYS_KEK_FILE names), which this API process "
            "was started without"
        )
    return vault


@router.post("/v1/webhooks", status_code=201, response_model=WebhookCreated)
async def add_webhook(
    request: Request, tenant: OperatorTenant, registration: WebhookRegistration
) -> WebhookCreated:
    """Register an endpoint for one project; the answer holds its signing secret, once."""
    vault = _vault(request)
    policy = DestinationPolicy(request.app.state.settings.webhooks)
    async with request.app.state.pool.acquire() as conn:
        endpoint, secret = await register(
            conn,
            vault,
            policy,
            tenant=tenant,
            project=registration.project,
            url=registration.url,
            events=registration.events,
        )
    return created_view(endpoint, secret)


@router.get("/v1/webhooks", response_model=WebhookEndpoints)
async def webhooks(
    request: Request, tenant: OperatorTenant, project: NameQuery = None
) -> WebhookEndpoints:
    """The tenant's endpoints (or one project's), never their secrets."""
    found = await list_endpoints(request.app.state.pool, tenant=tenant, project=project)
    return WebhookEndpoints(items=[endpoint_view(e) for e in found])


@router.get("/v1/webhook-deliveries", response_model=WebhookDeliveries)
async def webhook_deliveries(
    request: Request,
    tenant: OperatorTenant,
    endpoint: uuid.UUID | None = None,
    failed: bool = False,
    limit: Annotated[int, Query(ge=1, le=1000)] = 100,
) -> WebhookDeliveries:
    """Deliveries, newest first (``failed``: the parked ones); metadata, never a body."""
    pool = request.app.state.pool
    if endpoint is not None:
        await find_endpoint(pool, tenant=tenant, endpoint_id=endpoint)
    found = await list_deliveries(
        pool, tenant=tenant, endpoint_id=endpoint, failed=failed, limit=limit
    )
    return WebhookDeliveries(items=found)


@router.delete("/v1/webhooks/{endpoint_id}", status_code=204)
async def delete_webhook(
    request: Request, tenant: OperatorTenant, endpoint_id: uuid.UUID
) -> Response:
    """Remove the endpoint, its secrets and what is owed to it."""
    await remove_endpoint(request.app.state.pool, tenant=tenant, endpoint_id=endpoint_id)
    return Response(status_code=204)


@router.post("/v1/webhooks/{endpoint_id}/rotate", response_model=WebhookSecretRotated)
async def rotate_webhook_secret(
    request: Request, tenant: OperatorTenant, endpoint_id: uuid.UUID
) -> WebhookSecretRotated:
    """A new signing secret (in the answer, once); the old one signs beside it for
    ENGRAM_WEBHOOKS_ROTATION_OVERLAP_S."""
    vault = _vault(request)
    overlap_s = request.app.state.settings.webhooks.rotation_overlap_s
    async with request.app.state.pool.acquire() as conn:
        secret, until = await rotate_secret(
            conn, vault, tenant=tenant, endpoint_id=endpoint_id, overlap_s=overlap_s
        )
    return WebhookSecretRotated(id=endpoint_id, secret=secret, previous_valid_until=until)
