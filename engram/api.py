"""The API: beliefs, refusals and freshness, and corrections, deletion and forgetting,
scoped by tenant and principal.

When tokens are configured (``ENGRAM_API_TOKENS``), a bearer token names exactly one
tenant/principal and a request for anyone else is refused; without tokens the API serves
loopback development use and takes the principal from the query.
"""

import uuid
from collections.abc import AsyncIterator, Awaitable
from contextlib import asynccontextmanager
from datetime import datetime
from typing import Annotated

import asyncpg
from aiokafka.errors import KafkaError
from fastapi import APIRouter, Depends, FastAPI, Header, HTTPException, Query, Request
from fastapi.responses import JSONResponse
from pydantic import BaseModel, Field

from engram.service.corrections import (
    BeliefNotFound,
    Corrections,
    InvalidCorrection,
    LogPosition,
)
from engram.shared.db import UNAVAILABLE, create_pool, report_unavailable
from engram.shared.generations import GenerationError
from engram.shared.reading import reading
from engram.shared.settings import Settings
from projections.freshness import Freshness, freshness, wait_formed_through
from projections.queries import (
    BeliefDetail,
    BeliefView,
    RefusalView,
    get_belief,
    list_beliefs,
    list_refusals,
)
from schemas.corrections import CorrectionKind

RETRY_AFTER_S = 5


class CorrectionRequest(BaseModel):
    kind: CorrectionKind
    replacement: str | None = Field(default=None, min_length=1, max_length=4096)
    project: str | None = Field(default=None, min_length=1, max_length=200)


class Appended(BaseModel):
    """Where a write landed in the episodic log; wait on ``/v1/freshness`` for ``offset``."""

    event_id: uuid.UUID
    tenant: str
    project: str
    partition: int
    offset: int


def _appended(position: LogPosition) -> Appended:
    return Appended(
        event_id=position.event_id,
        tenant=position.tenant,
        project=position.project,
        partition=position.partition,
        offset=position.offset,
    )


async def _write(call: Awaitable[LogPosition]) -> LogPosition:
    """A write's errors as HTTP: not this principal's → 404, cannot apply → 422, Kafka not
    reachable → 503 (nothing was appended in any of these)."""
    try:
        return await call
    except BeliefNotFound as error:
        raise HTTPException(404, str(error)) from None
    except InvalidCorrection as error:
        raise HTTPException(422, str(error)) from None
    except KafkaError as error:
        raise HTTPException(
            503,
            f"the episodic log is unreachable ({type(error).__name__}); retry shortly",
            headers={"Retry-After": str(RETRY_AFTER_S)},
        ) from None


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


def _pool(request: Request) -> asyncpg.Pool:
    return request.app.state.pool


def _scopes(request: Request) -> TokenScopes:
    scopes: TokenScopes = request.app.state.tokens
    return scopes


def _corrections(request: Request) -> Corrections:
    return Corrections(request.app.state.pool, request.app.state.settings.kafka)


async def _reader(
    request: Request, generation: Annotated[str | None, Query(min_length=1)] = None
) -> AsyncIterator[asyncpg.Connection]:
    """A connection reading one generation — the live one unless ``generation`` names
    another — for the whole request: never a mix across a promote."""
    async with reading(request.app.state.pool, generation) as conn:
        yield conn


async def _no_generation(request: Request, error: Exception) -> JSONResponse:
    return JSONResponse({"detail": str(error)}, status_code=404)


Pool = Annotated[asyncpg.Pool, Depends(_pool)]
Reader = Annotated[asyncpg.Connection, Depends(_reader)]
Scopes = Annotated[TokenScopes, Depends(_scopes)]
Service = Annotated[Corrections, Depends(_corrections)]


def _principal_scope(
    scopes: Scopes,
    principal: Annotated[str, Query(min_length=1)],
    tenant: Annotated[str, Query(min_length=1)] = "default",
    authorization: Annotated[str | None, Header()] = None,
) -> tuple[str, str]:
    return scopes.principal(tenant, principal, authorization)


def _tenant_scope(
    scopes: Scopes,
    tenant: Annotated[str, Query(min_length=1)] = "default",
    authorization: Annotated[str | None, Header()] = None,
) -> str:
    return scopes.tenant(tenant, authorization)


Who = Annotated[tuple[str, str], Depends(_principal_scope)]
Tenant = Annotated[str, Depends(_tenant_scope)]
router = APIRouter()


async def _database_unavailable(request: Request, error: Exception) -> JSONResponse:
    """An unreachable database is the service's problem, not the caller's: 503, retry."""
    report_unavailable(f"api {request.url.path}", error, RETRY_AFTER_S)
    return JSONResponse(
        {"detail": "the memory store is unreachable right now; retry shortly"},
        status_code=503,
        headers={"Retry-After": str(RETRY_AFTER_S)},
    )


def create_api(settings: Settings) -> FastAPI:
    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        app.state.pool = await create_pool(settings.database, role="engram-api")
        try:
            yield
        finally:
            await app.state.pool.close()

    api = FastAPI(title="Engram API", version="1", lifespan=lifespan)
    api.state.settings = settings
    api.state.tokens = TokenScopes(
        {t.get_secret_value(): who for t, who in settings.api.token_scopes().items()}
    )
    for unavailable in UNAVAILABLE:
        api.add_exception_handler(unavailable, _database_unavailable)
    api.add_exception_handler(GenerationError, _no_generation)
    api.include_router(router)
    return api


@router.get("/v1/beliefs", response_model=list[BeliefView])
async def beliefs(
    who: Who,
    db: Reader,
    all: bool = False,
    as_of: datetime | None = None,
    project: Annotated[str | None, Query(min_length=1)] = None,
) -> list[BeliefView]:
    """Current beliefs (or all, or as of a time); with ``project``, what applies there."""
    tenant, principal = who
    return await list_beliefs(
        db, tenant=tenant, principal=principal, include_all=all, as_of=as_of, project=project
    )


@router.get("/v1/refusals", response_model=list[RefusalView])
async def refusals(who: Who, db: Reader) -> list[RefusalView]:
    tenant, principal = who
    return await list_refusals(db, tenant=tenant, principal=principal)


@router.get("/v1/freshness", response_model=Freshness)
async def project_freshness(
    tenant: Tenant,
    db: Reader,
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


@router.get("/v1/beliefs/{belief_id}", response_model=BeliefDetail)
async def belief(belief_id: uuid.UUID, who: Who, db: Reader) -> BeliefDetail:
    """One belief with all its evidence, its history and the corrections of its content;
    404 for a belief that is not this principal's."""
    tenant, principal = who
    found = await get_belief(db, tenant=tenant, principal=principal, belief_id=belief_id)
    if found is None:
        raise HTTPException(404, f"no belief {belief_id} for this principal")
    return found


@router.post("/v1/beliefs/{belief_id}/corrections", status_code=202, response_model=Appended)
async def correct(
    belief_id: uuid.UUID, body: CorrectionRequest, who: Who, service: Service
) -> Appended:
    """Append a correction (untrue, changed with a replacement, not_here, unspecified) to
    the log; it applies once the project's formed watermark passes ``offset``."""
    tenant, principal = who
    return _appended(
        await _write(
            service.correct(
                tenant=tenant,
                principal=principal,
                belief_id=belief_id,
                kind=body.kind,
                replacement=body.replacement,
                project=body.project,
            )
        )
    )


@router.delete("/v1/beliefs/{belief_id}", status_code=202, response_model=Appended)
async def delete(belief_id: uuid.UUID, who: Who, service: Service) -> Appended:
    """Delete a belief: its words leave every projection, a hash stays as its tombstone."""
    tenant, principal = who
    return _appended(
        await _write(service.delete(tenant=tenant, principal=principal, belief_id=belief_id))
    )


@router.delete("/v1/principals/{principal}", status_code=202, response_model=Appended)
async def forget(
    principal: str,
    service: Service,
    scopes: Scopes,
    tenant: Annotated[str, Query(min_length=1)] = "default",
    authorization: Annotated[str | None, Header()] = None,
) -> Appended:
    """Forget a person: every projected row of theirs goes; nothing of theirs forms again."""
    tenant, principal = scopes.principal(tenant, principal, authorization)
    return _appended(await _write(service.forget(tenant=tenant, principal=principal)))


@router.get("/healthz")
async def health(db: Pool) -> dict[str, str]:
    await db.fetchval("SELECT 1")
    return {"status": "ok"}
