"""HTTP ingest: ``POST /v1/turns`` and ``POST /v1/remember`` append producers' episodes.

The body is validated with the contract's own models (a turn or an explicit memory; a
correction's ``type`` is Engram's own and is a 422), every episode's scope is checked, and every
episode is measured, all before the first is appended: one bad episode refuses the request and
nothing is written. The answer is 202 with each episode's log position, which a caller passes to
``GET /v1/freshness?wait_for_offset=`` to learn when it has formed.

A duplicate ``event_id`` is appended again (the log is append-only, and the API keeps no index
of ids) but forms once: formation names a claims batch after the episode's tenant, principal,
project and id and the policy version, and the projector skips a batch whose run already
exists. Another tenant's (or principal's, or project's) episode under the same id is another.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Annotated, Any

from aiokafka.errors import KafkaError
from fastapi import APIRouter, Body, HTTPException, Request

from engram.ingest.intake import Intake, Producible
from engram.schemas.api import (
    LogPosition,
    Problem,
    RememberRequest,
    TurnsAccepted,
    TurnsBatch,
    TurnsRequest,
)
from engram.schemas.episodes import MemoryRemembered
from engram.web.auth import Calling
from engram.web.json_body import JsonRoute

RETRY_AFTER_S = 5
router = APIRouter(tags=["ingest"], route_class=JsonRoute)
ERRORS: dict[int | str, dict[str, Any]] = {
    code: {"model": Problem} for code in (401, 403, 413, 503)
}


def _intake(request: Request) -> Intake:
    intake: Intake = request.app.state.intake
    return intake


async def append(
    request: Request, calling: Calling, episodes: Sequence[Producible]
) -> TurnsAccepted:
    """Check scope and size of every episode, then append them all, in request order."""
    for episode in episodes:
        calling.append(episode.tenant, episode.principal)
    try:
        appended = await _intake(request).append(episodes)
    except KafkaError as error:
        raise HTTPException(
            503,
            f"the episodic log is unreachable ({type(error).__name__}); nothing was appended "
            "unless the broker failed mid-batch; retry the whole request (duplicates form once)",
            headers={"Retry-After": str(RETRY_AFTER_S)},
        ) from None
    return TurnsAccepted(appended=appended)


@router.post("/v1/turns", status_code=202, response_model=TurnsAccepted)
async def turns(
    request: Request, calling: Calling, body: Annotated[TurnsRequest, Body()]
) -> TurnsAccepted:
    """Append one episode (a ``turn.appended`` or ``memory.remember``) or ``{"turns": [...]}``.

    422 names the first invalid field (nothing appended); 413 for a body over
    ENGRAM_API_MAX_BODY_BYTES or an episode over ENGRAM_KAFKA_MAX_EVENT_BYTES; 503 with
    Retry-After when Kafka cannot be reached."""
    episodes = body.turns if isinstance(body, TurnsBatch) else [body]
    return await append(request, calling, episodes)


@router.post("/v1/remember", status_code=202, response_model=LogPosition)
async def remember(request: Request, calling: Calling, body: RememberRequest) -> LogPosition:
    """Explicit memory: one ``memory.remember`` episode, which skips the salience threshold
    and passes every eligibility gate like any statement."""
    tenant, principal = calling.writer(body.tenant, body.principal)
    episode = MemoryRemembered.model_validate(
        {**body.model_dump(), "tenant": tenant, "principal": principal}
    )
    accepted = await append(request, calling, [episode])
    return accepted.appended[0]
