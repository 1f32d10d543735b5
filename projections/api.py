"""The read API: ``GET /v1/beliefs`` and ``GET /v1/refusals``, scoped by tenant and principal.

When tokens are configured (``ENGRAM_API_TOKENS``), a bearer token names exactly one
tenant/principal and a request for anyone else is refused; without tokens the API serves
loopback development use and takes the principal from the query.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from datetime import datetime
from typing import Annotated

import asyncpg
from fastapi import Depends, FastAPI, Header, HTTPException, Query, Request

from engram.settings import Settings
from projections.db import create_pool
from projections.queries import BeliefView, RefusalView, list_beliefs, list_refusals


def create_api(settings: Settings) -> FastAPI:
    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        app.state.pool = await create_pool(settings.database)
        try:
            yield
        finally:
            await app.state.pool.close()

    api = FastAPI(title="Engram read API", version="1", lifespan=lifespan)
    tokens = {t.get_secret_value(): scope for t, scope in settings.api.token_scopes().items()}

    def pool(request: Request) -> asyncpg.Pool:
        return request.app.state.pool

    def scope(
        principal: Annotated[str, Query(min_length=1)],
        tenant: Annotated[str, Query(min_length=1)] = "default",
        authorization: Annotated[str | None, Header()] = None,
    ) -> tuple[str, str]:
        if not tokens:
            return tenant, principal
        token = (authorization or "").removeprefix("Bearer ").strip()
        allowed = tokens.get(token)
        if allowed is None:
            raise HTTPException(401, "a bearer token from ENGRAM_API_TOKENS is required")
        if allowed != (tenant, principal):
            raise HTTPException(403, "this token is not for that tenant and principal")
        return allowed

    Scope = Annotated[tuple[str, str], Depends(scope)]
    Pool = Annotated[asyncpg.Pool, Depends(pool)]

    @api.get("/v1/beliefs", response_model=list[BeliefView])
    async def beliefs(
        who: Scope, db: Pool, all: bool = False, as_of: datetime | None = None
    ) -> list[BeliefView]:
        tenant, principal = who
        return await list_beliefs(
            db, tenant=tenant, principal=principal, include_all=all, as_of=as_of
        )

    @api.get("/v1/refusals", response_model=list[RefusalView])
    async def refusals(who: Scope, db: Pool) -> list[RefusalView]:
        tenant, principal = who
        return await list_refusals(db, tenant=tenant, principal=principal)

    @api.get("/healthz")
    async def health(db: Pool) -> dict[str, str]:
        await db.fetchval("SELECT 1")
        return {"status": "ok"}

    return api
