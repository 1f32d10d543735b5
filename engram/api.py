"""The API: ingest, beliefs, refusals, search and freshness, and corrections, deletion and forgetting,
scoped by the caller's token (``engram.web.auth``).

Tokens are required unless the API was started in development mode, which it refuses on any
address but loopback and announces at start. Request and response models are the HTTP contract
in ``schemas/api.py``, exported to ``schemas/openapi.json``.
"""

import ipaddress
import json
import uuid
from collections.abc import AsyncIterator, Awaitable
from contextlib import asynccontextmanager
from typing import Annotated, Any

import asyncpg
from aiokafka.errors import KafkaError
from fastapi import APIRouter, Depends, FastAPI, HTTPException, Path, Query, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, Response

from engram.infra.db import UNAVAILABLE, create_pool, report_unavailable
from engram.infra.errors import EngramFailure
from engram.infra.heap import freeze_startup_heap
from engram.infra.settings import Settings
from engram.ingest.intake import Intake
from engram.keys.kek import kek_configured
from engram.notifications.vault import SecretVault
from engram.projections.messages.embeddings.wiring import embedder_from_settings
from engram.projections.reads.freshness import freshness, wait_formed_through
from engram.projections.reads.pages import BeliefFilter, page_beliefs
from engram.projections.reads.queries import get_belief
from engram.schemas.api import (
    PROJECT_UNKNOWN,
    BeliefDetail,
    BeliefPage,
    BeliefStatus,
    CorrectionRequest,
    Freshness,
    LogPosition,
    Problem,
)
from engram.schemas.common import IDENTIFIER_PATTERN
from engram.schemas.receipts import ErasureReceipt
from engram.sealing.opening import open_sealer
from engram.service.corrections import Corrections
from engram.service.erasures import Erasures
from engram.watermarks.backlog import watermark
from engram.web import audit, conversations, failures, openapi, recall, search, turns, ui, webhooks
from engram.web.auth import Calling, NameQuery, Tenant, Who
from engram.web.invalid import invalid_request
from engram.web.json_body import JsonRoute
from engram.web.limits import BodyLimit
from engram.web.methods import ServedMethods
from engram.web.readers import (
    Cursor,
    DateTimeQuery,
    FilterWord,
    Limit,
    PrincipalReader,
    Reader,
    as_json,
)
from engram.web.service import corrections_of, erasures_of

RETRY_AFTER_S = 5


MAX_WAIT_S = 120.0
"""The longest a request waits for an erasure's receipt."""


async def _write(call: Awaitable[LogPosition]) -> LogPosition:
    """A write's errors as HTTP: Kafka not reachable → 503; its refusals (not this principal's,
    cannot apply) are answered by :mod:`engram.web.failures`. Nothing was appended in any."""
    try:
        return await call
    except KafkaError as error:
        raise HTTPException(
            503,
            f"the episodic log is unreachable ({type(error).__name__}); retry shortly",
            headers={"Retry-After": str(RETRY_AFTER_S)},
        ) from None


def _pool(request: Request) -> asyncpg.Pool:
    return request.app.state.pool


Pool = Annotated[asyncpg.Pool, Depends(_pool)]
Service = Annotated[Corrections, Depends(corrections_of)]
ErasuresService = Annotated[Erasures, Depends(erasures_of)]


router = APIRouter(route_class=JsonRoute)
probes = APIRouter()
READ_ERRORS: dict[int | str, dict[str, Any]] = {
    code: {"model": Problem} for code in (401, 404, 422, 503)
}


async def _database_unavailable(request: Request, error: Exception) -> JSONResponse:
    """An unreachable database is the service's problem, not the caller's: 503, retry."""
    report_unavailable(f"api {request.url.path}", error, RETRY_AFTER_S)
    return JSONResponse(
        {"detail": "the memory store is unreachable right now; retry shortly"},
        status_code=503,
        headers={"Retry-After": str(RETRY_AFTER_S)},
    )


class DevModeRefused(EngramFailure, ValueError):
    """Development mode (no tokens) was asked for on an address other people can reach."""

    code = "dev_mode_refused"


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:  # a name other than localhost may resolve anywhere
        return False


def check_dev_mode(settings: Settings, host: str) -> None:
    if settings.api.dev_mode and not is_loopback(host):
        raise DevModeRefused(
            f"development mode serves without tokens and only on loopback, not on {host}; "
            "create tokens with `engram tokens create` instead"
        )


def create_api(settings: Settings) -> FastAPI:
    check_dev_mode(settings, settings.api.host)

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        app.state.pool = await create_pool(settings.database, role="engram-api")
        app.state.sealer = await open_sealer(settings.keys, app.state.pool)
        app.state.intake = Intake(settings.kafka, app.state.sealer)
        # Recall's semantic list: the configured model, used when its generation is active.
        app.state.embedder = embedder_from_settings(settings.embedding)
        app.state.webhook_vault = (
            SecretVault.from_settings(settings.keys) if kek_configured(settings.keys) else None
        )
        freeze_startup_heap()  # per-request garbage is collected as before, start-up's is not rescanned
        try:
            yield
        finally:
            await app.state.intake.close()
            await app.state.pool.close()

    api = FastAPI(title="Engram API", version="1", lifespan=lifespan)
    api.state.settings = settings
    api.add_middleware(BodyLimit, max_bytes=settings.api.max_body_bytes)
    for unavailable in UNAVAILABLE:
        api.add_exception_handler(unavailable, _database_unavailable)
    failures.install(api)
    api.add_exception_handler(RequestValidationError, invalid_request)
    api.include_router(turns.router, responses=turns.ERRORS)
    api.include_router(router, responses=READ_ERRORS)
    api.include_router(search.router, responses=READ_ERRORS)
    api.include_router(recall.router, responses=READ_ERRORS)
    api.include_router(audit.router, responses=READ_ERRORS)
    api.include_router(conversations.router, responses=READ_ERRORS)
    api.include_router(webhooks.router, responses=webhooks.ERRORS)
    api.include_router(probes)
    ui.install(api, settings)
    served = ServedMethods(
        [
            *api.router.routes,
            *(
                route
                for part in (turns, search, recall, audit, conversations, webhooks)
                for route in part.router.routes
            ),
            *(route for part in ui.ROUTERS for route in part.routes),
            *router.routes,
            *probes.routes,
        ]
    )
    api.add_exception_handler(405, served.refuse)
    openapi.install(api)
    return api


@router.get("/v1/beliefs", response_model=BeliefPage)
async def beliefs(
    who: Who,
    db: PrincipalReader,
    limit: Limit = 50,
    cursor: Cursor = None,
    all: bool = False,
    as_of: DateTimeQuery = None,
    project: NameQuery = None,
    status: BeliefStatus | None = None,
    belief_type: FilterWord = None,
    relation: FilterWord = None,
    min_confidence: Annotated[float | None, Query(ge=0, le=1)] = None,
) -> Response:
    """Current beliefs (or all, or one ``status``, or as of a time), a page at a time; with
    ``project``, what applies there; narrowed by type, relation and confidence."""
    tenant, principal = who
    chosen = BeliefFilter(
        include_all=all,
        as_of=as_of,
        project=project,
        status=status,
        belief_type=belief_type,
        relation=relation,
        min_confidence=min_confidence,
    )
    return as_json(
        await page_beliefs(
            db, tenant=tenant, principal=principal, chosen=chosen, limit=limit, cursor=cursor
        )
    )


@router.get("/v1/freshness", response_model=Freshness, responses={408: {"model": Problem}})
async def project_freshness(
    tenant: Tenant,
    db: Reader,
    project: Annotated[str, Query(min_length=1, max_length=200, pattern=IDENTIFIER_PATTERN)],
    wait_for_offset: Annotated[int | None, Query(ge=0)] = None,
    timeout_s: Annotated[float, Query(gt=0, le=300)] = 30.0,
) -> Freshness:
    """Both offsets, the lag, the parked count and the policy in force. With
    ``wait_for_offset`` it answers once the project has formed through that offset (408 at
    the timeout): how clients synchronise instead of sleeping. A wait for a project of which
    formation has read no episode is 404 at once: there is nothing to wait on yet."""
    if wait_for_offset is not None:
        known = await watermark(db, tenant=tenant, project=project)
        if known.log_offset is None:
            raise HTTPException(
                404,
                f"{PROJECT_UNKNOWN} {project} in tenant {tenant}: formation has read no episode "
                "of it, so nothing can form through that offset. Check the name; if its first "
                "episode was appended a moment ago, ask again once `engram worker` has read it "
                "(the Python client's wait_formed does)",
            )
        if not await wait_formed_through(
            db, tenant=tenant, project=project, offset=wait_for_offset, timeout_s=timeout_s
        ):
            raise HTTPException(408, f"not formed through {wait_for_offset} in {timeout_s}s")
    return await freshness(db, tenant=tenant, project=project)


@router.get("/v1/beliefs/{belief_id}", response_model=BeliefDetail)
async def belief(belief_id: uuid.UUID, who: Who, db: PrincipalReader) -> Response:
    """One belief with all its evidence, its history and the corrections of its content;
    404 for a belief that is not this principal's."""
    tenant, principal = who
    found = await get_belief(db, tenant=tenant, principal=principal, belief_id=belief_id)
    if found is None:
        raise HTTPException(404, f"no belief {belief_id} for this principal")
    return as_json(found)


@router.post("/v1/beliefs/{belief_id}/corrections", status_code=202, response_model=LogPosition)
async def correct(
    belief_id: uuid.UUID, body: CorrectionRequest, who: Who, service: Service
) -> LogPosition:
    """Append a correction (untrue, changed with a replacement, not_here, unspecified) to
    the log; it applies once the project's formed watermark passes ``offset``."""
    tenant, principal = who
    return await _write(
        service.correct(
            tenant=tenant,
            principal=principal,
            belief_id=belief_id,
            kind=body.kind,
            replacement=body.replacement,
            project=body.project,
        )
    )


WaitS = Annotated[
    float,
    Query(
        ge=0,
        le=MAX_WAIT_S,
        description="Wait up to this many seconds for the erasure to apply and answer 200 with "
        "its receipt; 202 with the log position if it has not applied by then (0: at once).",
    ),
]

_ERASURE_RESPONSES: dict[int | str, dict[str, Any]] = {
    200: {"model": ErasureReceipt, "description": "Applied within `wait_s`: the receipt."},
    202: {"model": LogPosition, "description": "Appended; `Location` names its receipt."},
}


async def _erasure_answer(
    position: LogPosition, erasures: Erasures, *, principal: str, wait_s: float
) -> Response:
    """202 with the position (and where its receipt will be), or 200 with the receipt when it
    applied within ``wait_s``: a principal forgetting themselves must wait here, since the
    forgetting deletes the token they would ask for the receipt with."""
    receipt = None
    if wait_s > 0:
        receipt = await erasures.receipt(
            event_id=position.event_id,
            tenant=position.tenant,
            principal=principal,
            timeout_s=wait_s,
        )
    if receipt is not None:
        return JSONResponse(receipt.model_dump(mode="json"), status_code=200)
    return JSONResponse(
        position.model_dump(mode="json"),
        status_code=202,
        headers={"Location": f"/v1/erasures/{position.event_id}"},
    )


@router.delete(
    "/v1/beliefs/{belief_id}",
    status_code=202,
    response_model=LogPosition,
    responses=_ERASURE_RESPONSES,
)
async def delete(
    belief_id: uuid.UUID, who: Who, service: Service, erasures: ErasuresService, wait_s: WaitS = 0
) -> Response:
    """Delete a belief: its words leave every projection, a hash stays as its tombstone. The
    receipt (`GET /v1/erasures/{event_id}`) says what went and where the words still are."""
    tenant, principal = who
    position = await _write(service.delete(tenant=tenant, principal=principal, belief_id=belief_id))
    return await _erasure_answer(position, erasures, principal=principal, wait_s=wait_s)


@router.delete(
    "/v1/principals/{principal}",
    status_code=202,
    response_model=LogPosition,
    responses=_ERASURE_RESPONSES,
)
async def forget(
    principal: Annotated[str, Path(min_length=1, max_length=200, pattern=IDENTIFIER_PATTERN)],
    service: Service,
    erasures: ErasuresService,
    calling: Calling,
    tenant: NameQuery = None,
    wait_s: WaitS = 0,
) -> Response:
    """Forget a person: every projected row of theirs goes, their data key is destroyed, and
    nothing of theirs forms again. The receipt says what went and where the words still are."""
    tenant, principal = calling.principal(tenant, principal)
    position = await _write(service.forget(tenant=tenant, principal=principal))
    return await _erasure_answer(position, erasures, principal=principal, wait_s=wait_s)


@router.get(
    "/v1/erasures/{event_id}",
    response_model=ErasureReceipt,
    responses={408: {"model": Problem}},
)
async def erasure(
    event_id: uuid.UUID,
    who: Who,
    erasures: ErasuresService,
    timeout_s: Annotated[float, Query(ge=0, le=MAX_WAIT_S)] = 0,
) -> ErasureReceipt:
    """The receipt of a deletion or forgetting (the `event_id` its `DELETE` answered): what was
    erased, where, the data key destroyed, and whether the words stay in the episodic log
    (sealed, or in clear until its retention). 404 until it has applied (or if it was never
    this principal's); with `timeout_s`, waits for it and answers 408 if it has not applied."""
    tenant, principal = who
    receipt = await erasures.receipt(
        event_id=event_id, tenant=tenant, principal=principal, timeout_s=timeout_s
    )
    if receipt is None and timeout_s > 0:
        raise HTTPException(408, f"erasure {event_id} has not applied in {timeout_s}s")
    if receipt is None:
        raise HTTPException(404, f"no erasure {event_id} applied for this principal")
    return receipt


@probes.get("/healthz", responses={503: {"model": Problem}})
async def health(db: Pool) -> dict[str, str]:
    await db.fetchval("SELECT 1")
    return {"status": "ok"}


def render_openapi() -> str:
    """The API's OpenAPI document as committed in ``schemas/openapi.json``: the HTTP contract
    beside the events' JSON Schemas, drift-checked by ``engram schemas export --check``."""
    document = create_api(Settings()).openapi()
    return json.dumps(document, indent=2, sort_keys=True) + "\n"
