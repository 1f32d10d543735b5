"""The audit reads: formation runs, refusals and their summary, a session's diagnosis and the
user model — each scoped to one principal by the caller's token (another's is 404, never 403).

Paged lists share one envelope, ``{"items": [...], "next_cursor": "..." | null}``: pass
``next_cursor`` back as ``cursor`` for the next page, ``limit`` items at a time (at most 500).
"""

from __future__ import annotations

import uuid
from typing import Annotated

from fastapi import APIRouter, HTTPException, Path, Query

from engram.projections.reads.diagnosis import diagnose_session
from engram.projections.reads.refusals import RefusalFilter, page_refusals, refusal_summary
from engram.projections.reads.runs import RunFilter, page_runs, run_detail
from engram.projections.reads.user_model import user_model
from engram.schemas.api import (
    RefusalPage,
    RefusalSummary,
    RunDetail,
    RunPage,
    SessionDiagnosis,
    UserModel,
)
from engram.schemas.claims import RefusalReason
from engram.schemas.common import IDENTIFIER_PATTERN
from engram.web.auth import NameQuery, Who
from engram.web.readers import Cursor, DateTimeQuery, FilterWord, Limit, PrincipalReader

router = APIRouter(tags=["audit"])
Trigger = Annotated[str | None, Query(pattern="^(turn|explicit|correction)$")]
Relation = FilterWord


@router.get("/v1/runs", response_model=RunPage)
async def runs(
    who: Who,
    db: PrincipalReader,
    limit: Limit = 50,
    cursor: Cursor = None,
    project: NameQuery = None,
    session: NameQuery = None,
    trigger: Trigger = None,
    since: DateTimeQuery = None,
) -> RunPage:
    """Formation runs in event-time order: policy, source position and counts of each."""
    tenant, principal = who
    chosen = RunFilter(project=project, session=session, trigger=trigger, since=since)
    return await page_runs(
        db, tenant=tenant, principal=principal, chosen=chosen, limit=limit, cursor=cursor
    )


@router.get("/v1/runs/{run_id}", response_model=RunDetail)
async def run(run_id: uuid.UUID, who: Who, db: PrincipalReader) -> RunDetail:
    """One run: what it formed, reinforced and refused, its episode's attempts and timing,
    and its project's watermark; 404 for a run that is not this principal's."""
    tenant, principal = who
    found = await run_detail(db, tenant=tenant, principal=principal, run_id=run_id)
    if found is None:
        raise HTTPException(404, f"no run {run_id} for this principal")
    return found


@router.get("/v1/refusals", response_model=RefusalPage)
async def refusals(
    who: Who,
    db: PrincipalReader,
    limit: Limit = 50,
    cursor: Cursor = None,
    reason: RefusalReason | None = None,
    project: NameQuery = None,
    relation: Relation = None,
    since: DateTimeQuery = None,
) -> RefusalPage:
    """Refused proposals with their words, reason and policy, in event-time order."""
    tenant, principal = who
    chosen = RefusalFilter(reason=reason, project=project, relation=relation, since=since)
    return await page_refusals(
        db, tenant=tenant, principal=principal, chosen=chosen, limit=limit, cursor=cursor
    )


@router.get("/v1/refusals/summary", response_model=RefusalSummary)
async def refusals_summary(
    who: Who,
    db: PrincipalReader,
    reason: RefusalReason | None = None,
    project: NameQuery = None,
    since: DateTimeQuery = None,
) -> RefusalSummary:
    """Refusals counted by reason, and unmapped ones by the relation that was proposed."""
    tenant, principal = who
    chosen = RefusalFilter(reason=reason, project=project, since=since)
    return await refusal_summary(db, tenant=tenant, principal=principal, chosen=chosen)


@router.get("/v1/sessions/{session}/diagnosis", response_model=SessionDiagnosis)
async def session_diagnosis(
    session: Annotated[str, Path(min_length=1, max_length=200, pattern=IDENTIFIER_PATTERN)],
    who: Who,
    db: PrincipalReader,
) -> SessionDiagnosis:
    """What a session formed, what was refused and why, attempts and parking — never the
    messages; 404 for a session with no episode of this principal's."""
    tenant, principal = who
    found = await diagnose_session(db, tenant=tenant, principal=principal, session=session)
    if found is None:
        raise HTTPException(404, f"no session {session} for this principal")
    return found


@router.get("/v1/user-model", response_model=UserModel)
async def read_user_model(who: Who, db: PrincipalReader) -> UserModel:
    """What holds about the principal everywhere: their active user-scope attributes and
    preferences."""
    tenant, principal = who
    return await user_model(db, tenant=tenant, principal=principal)
