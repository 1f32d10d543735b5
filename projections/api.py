"""The read API: beliefs, refusals and freshness, scoped by tenant and principal.

When tokens are configured (``ENGRAM_API_TOKENS``), a bearer token names exactly one
tenant/principal and a request for anyone else is refused; without tokens the API serves
loopback development use and takes the principal from the query.
"""

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from datetime import datetime
from typing import Annotated

import asyncpg
from fastapi import Depends, FastAPI, Header, HTTPException, Query, Request
from fastapi.responses import JSONResponse

from engram.shared.db import UNAVAILABLE, create_pool, report_unavailable
from engram.shared.settings import Settings
from projections.freshness import Freshness, freshness, wait_formed_through
from projections.queries import BeliefView, RefusalView, list_beliefs, list_refusals

RETRY_AFTER_S = 5


class TokenScopes:
    """Which tenant/principal each bearer token may read; empty means development mode."""

    def __init__(self, scopes: dict[str, tuple[str, str]]):
        self._scopes = scopes

    def _holder(self, authorization: str | None) -> tuple[str, str] | None:
        if not self._scopes:
            return None
        token = (authorization or "").removeprefix("Bearer ").strip()
        holder = self._scopes.get(token)
        if holder is None:
            raise HTTPException(401, "a bearer token from ENGRAM_API_TOKENS is required")
        return holder

    def principal(self, tenant: str, principal: str, authorization: str | None) -> tuple[str, str]:
        holder = self._holder(authorization)
        if holder is not None and holder != (tenant, principal):
            raise HTTPException(403, "this token is not for that tenant and principal")
        return tenant, principal

    def tenant(self, tenant: str, authorization: str | None) -> str:
        holder = self._holder(authorization)
        if holder is not None and holder[0] != tenant:
            raise HTTPException(403, "this token is not for that tenant")
        return tenant


def create_api(settings: Settings) -> FastAPI:
    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        app.state.pool = await create_pool(settings.database, role="engram-api")
        try:
            yield
        finally:
            await app.state.pool.close()

    api = FastAPI(title="Engram read API", version="1", lifespan=lifespan)

    async def database_unavailable(request: Request, error: Exception) -> JSONResponse:
        """An unreachable database is the service's problem, not the caller's: 503, retry."""
        report_unavailable(f"api {request.url.path}", error, RETRY_AFTER_S)
        return JSONResponse(
            {"detail": "the memory store is unreachable right now; retry shortly"},
            status_code=503,
            headers={"Retry-After": str(RETRY_AFTER_S)},
        )

    for unavailable in UNAVAILABLE:
        api.add_exception_handler(unavailable, database_unavailable)
    tokens = TokenScopes(
        {t.get_secret_value(): who for t, who in settings.api.token_scopes().items()}
    )

    def pool(request: Request) -> asyncpg.Pool:
        return request.app.state.pool

    def principal_scope(
        principal: Annotated[str, Query(min_length=1)],
        tenant: Annotated[str, Query(min_length=1)] = "default",
        authorization: Annotated[str | None, Header()] = None,
    ) -> tuple[str, str]:
        return tokens.principal(tenant, principal, authorization)

    def tenant_scope(
        tenant: Annotated[str, Query(min_length=1)] = "default",
        authorization: Annotated[str | None, Header()] = None,
    ) -> str:
        return tokens.tenant(tenant, authorization)

    Who = Annotated[tuple[str, str], Depends(principal_scope)]
    Tenant = Annotated[str, Depends(tenant_scope)]
    Pool = Annotated[asyncpg.Pool, Depends(pool)]

    @api.get("/v1/beliefs", response_model=list[BeliefView])
    async def beliefs(
        who: Who, db: Pool, all: bool = False, as_of: datetime | None = None
    ) -> list[BeliefView]:
        tenant, principal = who
        return await list_beliefs(
            db, tenant=tenant, principal=principal, include_all=all, as_of=as_of
        )

    @api.get("/v1/refusals", response_model=list[RefusalView])
    async def refusals(who: Who, db: Pool) -> list[RefusalView]:
        tenant, principal = who
        return await list_refusals(db, tenant=tenant, principal=principal)

    @api.get("/v1/freshness", response_model=Freshness)
    async def project_freshness(
        tenant: Tenant,
        db: Pool,
        project: Annotated[str, Query(min_length=1)],
        wait_for_offset: Annotated[int | None, Query(ge=0)] = None,
        timeout_s: Annotated[float, Query(gt=0, le=300)] = 30.0,
    ) -> Freshness:
        """Both offsets, the lag, the parked count and the policy in force. With
        ``wait_for_offset`` it answers once the project has formed through that offset (408 at
        the timeout): how clients synchronise instead of sleeping."""
        if wait_for_offset is not None and not await wait_formed_through(
            db, tenant=tenant, project=project, offset=wait_for_offset, timeout_s=timeout_s
        ):
            raise HTTPException(408, f"not formed through {wait_for_offset} in {timeout_s}s")
        return await freshness(db, tenant=tenant, project=project)

    @api.get("/healthz")
    async def health(db: Pool) -> dict[str, str]:
        await db.fetchval("SELECT 1")
        return {"status": "ok"}

    return api
