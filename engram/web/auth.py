"""Who is calling, and what they may reach.

Outside development mode every ``/v1`` request carries ``Authorization: Bearer <token>``; the
token's :class:`~engram.service.tokens.Grant` decides the tenant and principal the request is
about, and every query is filtered by them. A request that names a tenant or principal outside
the grant is answered 404 whether or not anything exists there, so a token cannot be used to
learn who else has memories (no existence oracle). An append for someone else is 403: it names
no stored object, so refusing it reveals nothing.

Development mode (``engram api --dev`` / ``ENGRAM_API_DEV_MODE``) serves without tokens and
only on a loopback address; the principal then comes from the query.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated

from fastapi import Depends, HTTPException, Query, Request
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer

from engram.schemas.common import IDENTIFIER_PATTERN
from engram.service.tokens import Grant, grant_for

NOT_HERE = "nothing here for this token"
NameQuery = Annotated[str | None, Query(min_length=1, max_length=200, pattern=IDENTIFIER_PATTERN)]
"""A tenant, principal or project in the query: the same names the event contract allows."""


def _not_found() -> HTTPException:
    return HTTPException(404, NOT_HERE)


@dataclass(frozen=True)
class Caller:
    """The caller of one request: a grant, or None in development mode."""

    grant: Grant | None

    def principal(self, tenant: str | None, principal: str | None) -> tuple[str, str]:
        """The tenant and principal a request is about; outside the grant → 404. A principal's
        token may leave both out (they default to its own); an operator names the principal."""
        grant = self.grant
        if grant is not None and grant.principal is not None:
            if (tenant or grant.tenant, principal or grant.principal) != (
                grant.tenant,
                grant.principal,
            ):
                raise _not_found()
            return grant.tenant, grant.principal
        if principal is None:
            raise HTTPException(422, "principal is required (a query parameter)")
        return self.tenant(tenant), principal

    def tenant(self, tenant: str | None) -> str:
        """The tenant a request is about; another tenant than the grant's → 404."""
        if self.grant is None:
            return tenant or "default"
        if tenant is not None and tenant != self.grant.tenant:
            raise _not_found()
        return self.grant.tenant

    def writer(self, tenant: str | None, principal: str | None) -> tuple[str, str]:
        """Whom an append without an envelope is for: as named, else the token's own."""
        grant = self.grant
        tenant = tenant or (grant.tenant if grant else "default")
        principal = principal or (grant.principal if grant else None)
        if principal is None:
            raise HTTPException(422, "principal is required")
        return tenant, principal

    def append(self, tenant: str, principal: str) -> None:
        """May this caller append episodes for ``tenant``/``principal``? 403 otherwise."""
        grant = self.grant
        if grant is None:
            return
        if tenant != grant.tenant or (grant.principal not in (None, principal)):
            raise HTTPException(403, f"this token may not append for {tenant}/{principal}")


BEARER = HTTPBearer(auto_error=False, description="A token from `engram tokens create`.")


async def caller(
    request: Request,
    credentials: Annotated[HTTPAuthorizationCredentials | None, Depends(BEARER)] = None,
) -> Caller:
    """Resolve the bearer token (401 when missing, unknown, revoked or expired, alike)."""
    if request.app.state.settings.api.dev_mode:
        return Caller(None)
    token = credentials.credentials if credentials else None
    grant = None if token is None else await grant_for(request.app.state.pool, token)
    if grant is None:
        raise HTTPException(
            401,
            "a valid bearer token is required (`engram tokens create`)",
            headers={"WWW-Authenticate": "Bearer"},
        )
    return Caller(grant)


Calling = Annotated[Caller, Depends(caller)]


def _principal_scope(
    calling: Calling,
    principal: NameQuery = None,
    tenant: NameQuery = None,
) -> tuple[str, str]:
    return calling.principal(tenant, principal)


def _tenant_scope(calling: Calling, tenant: NameQuery = None) -> str:
    return calling.tenant(tenant)


Who = Annotated[tuple[str, str], Depends(_principal_scope)]
"""The tenant and principal a request reads or changes, inside the caller's grant."""
Tenant = Annotated[str, Depends(_tenant_scope)]
"""The tenant a request reads, inside the caller's grant."""
