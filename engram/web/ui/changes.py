"""The inspector's writes: correct a belief (three answers), delete it, forget the person.

Each goes through :class:`engram.service.corrections.Corrections`, the one path by which people
change memory (the API's routes call the same methods), in three steps a person can follow
without JavaScript: choose → see what will happen (the service's own checks run here, so a
refused replacement is said before anything is sent) → send, which appends to the log and
leads to a page that follows the project's formed watermark until the change has applied.
"""

from __future__ import annotations

import uuid
from typing import Any
from urllib.parse import urlencode

from fastapi import APIRouter, Request
from fastapi.responses import RedirectResponse, Response
from starlette.datastructures import FormData

from engram.generations.reading import reading
from engram.projections.beliefs.forgetting import words_left
from engram.schemas.api import LogPosition
from engram.schemas.corrections import CorrectionKind
from engram.service.corrections import (
    BeliefNotFound,
    InvalidCorrection,
)
from engram.watermarks.backlog import watermark
from engram.web.service import corrections_of, erasures_of
from engram.web.ui.access import Looking, Posted, Viewer, end, keys, set_cookie
from engram.web.ui.pages import load_belief, not_found, page
from engram.web.ui.render import render
from engram.web.ui.session import FORGETTING_COOKIE
from engram.web.ui.words import CORRECTION_CHOICES, DELETE

router = APIRouter(include_in_schema=False)

REFRESH_S = 1
"""How often a page waiting on the watermark reloads itself (a ``<meta>`` refresh: no script)."""


def _answer(form: FormData) -> tuple[str, str | None, str | None]:
    """The chosen answer, the new value (``changed`` only) and the project (``not_here``)."""
    choice = str(form.get("choice") or "")
    replacement = str(form.get("replacement") or "").strip() or None
    project = str(form.get("project") or "").strip() or None
    return (
        choice,
        replacement if choice == CorrectionKind.CHANGED else None,
        project if choice == CorrectionKind.NOT_HERE else None,
    )


async def _check(
    request: Request, viewer: Viewer, belief_id: uuid.UUID, form: FormData
) -> tuple[str, str | None, str | None, str | None]:
    """The answer and, when it cannot apply, why (in the service's words)."""
    choice, replacement, project = _answer(form)
    if choice not in CORRECTION_CHOICES:
        return choice, replacement, project, "Choose one of the answers."
    if choice == DELETE:
        return choice, replacement, project, None
    try:
        event = await corrections_of(request).check(
            tenant=viewer.tenant,
            principal=viewer.principal,
            belief_id=belief_id,
            kind=CorrectionKind(choice),
            replacement=replacement,
            project=project,
        )
    except InvalidCorrection as error:
        return choice, replacement, project, error.naming(lambda name: f"the {name}")
    # "not here" without a project means where it was learned: the preview names it
    named = event.project if choice == CorrectionKind.NOT_HERE else None
    return choice, replacement, named, None


@router.post("/ui/beliefs/{belief_id}/preview")
async def preview(request: Request, form: Posted, viewer: Looking, belief_id: str) -> Response:
    """What the chosen answer will do, before it is sent (or why it cannot be sent). The form
    is checked first: another site's post is refused before anything reads the session."""
    detail = await load_belief(request, viewer, belief_id)
    if detail is None:
        return await not_found(request, viewer)
    choice, replacement, project, problem = await _check(
        request, viewer, detail.belief.belief_id, form
    )
    after = (
        detail.belief.model_copy(update={"object": replacement, "facet": detail.belief.facet})
        if replacement
        else None
    )
    context: dict[str, Any] = {
        "detail": detail,
        "after": after,
        "choice": choice,
        "choices": CORRECTION_CHOICES,
        "replacement": replacement,
        "project": project,
        "problem": problem,
    }
    return await page(request, viewer, "preview.html", context, status_code=422 if problem else 200)


@router.post("/ui/beliefs/{belief_id}/send")
async def send(request: Request, form: Posted, viewer: Looking, belief_id: str) -> Response:
    """Append the correction (or deletion) to the log, then follow it until it applies."""
    detail = await load_belief(request, viewer, belief_id)
    if detail is None:
        return await not_found(request, viewer)
    wanted = detail.belief.belief_id
    choice, replacement, project, problem = await _check(request, viewer, wanted, form)
    if problem is not None:
        return await preview(request, form, viewer, belief_id)
    service = corrections_of(request)
    try:
        if choice == DELETE:
            position = await service.delete(
                tenant=viewer.tenant, principal=viewer.principal, belief_id=wanted
            )
        else:
            position = await service.correct(
                tenant=viewer.tenant,
                principal=viewer.principal,
                belief_id=wanted,
                kind=CorrectionKind(choice),
                replacement=replacement,
                project=project,
            )
    except BeliefNotFound:
        return await not_found(request, viewer)
    return RedirectResponse(_following(f"/ui/beliefs/{wanted}/applying", position, choice), 303)


def _following(path: str, position: LogPosition, choice: str) -> str:
    query = {
        "project": position.project,
        "offset": position.offset,
        "choice": choice,
        "event": str(position.event_id),
    }
    return f"{path}?{urlencode(query)}"


async def _applied(request: Request, viewer: Viewer) -> bool | None:
    """Has the project's formed watermark passed the offset in the query? None if the query
    is not one this page wrote."""
    try:
        project = request.query_params["project"]
        offset = int(request.query_params["offset"])
    except (KeyError, ValueError):
        return None
    async with reading(request.app.state.pool, principal=(viewer.tenant, viewer.principal)) as conn:
        mark = await watermark(conn, tenant=viewer.tenant, project=project)
    return mark.formed_through(offset)


@router.get("/ui/beliefs/{belief_id}/applying")
async def applying(request: Request, viewer: Looking, belief_id: str) -> Response:
    """Waits (reloading itself) until the correction has applied, then shows its result: the
    belief that replaced it, the belief as corrected, or the list once it is deleted."""
    applied = await _applied(request, viewer)
    choice = request.query_params.get("choice", "")
    if applied is None or choice not in CORRECTION_CHOICES:
        return await not_found(request, viewer)
    if not applied:
        context = {
            "choice": choice,
            "choices": CORRECTION_CHOICES,
            "refresh_s": REFRESH_S,
            "reload": f"{request.url.path}?{request.url.query}",
        }
        return await page(request, viewer, "applying.html", context, status_code=202)
    if choice == DELETE:
        event = request.query_params.get("event")
        target = f"/ui/erasures/{event}" if event else "/ui/beliefs?notice=deleted"
        return RedirectResponse(target, 303)
    detail = await load_belief(request, viewer, belief_id)
    if detail is None:
        return await not_found(request, viewer)
    shown = detail.belief.superseded_by if choice == CorrectionKind.CHANGED else None
    return RedirectResponse(f"/ui/beliefs/{shown or belief_id}?notice={choice}", 303)


@router.get("/ui/erasures/{event_id}")
async def erasure(request: Request, viewer: Looking, event_id: str) -> Response:
    """The receipt of a deletion this person made: what went, and where the words still are."""
    try:
        wanted = uuid.UUID(event_id)
    except ValueError:
        return await not_found(request, viewer)
    receipt = await erasures_of(request).receipt(
        event_id=wanted, tenant=viewer.tenant, principal=viewer.principal
    )
    if receipt is None:
        return await not_found(request, viewer)
    return await page(request, viewer, "erased.html", {"receipt": receipt})


@router.get("/ui/forget")
async def forget_form(request: Request, viewer: Looking) -> Response:
    return await page(request, viewer, "forget.html", {"problem": None})


@router.post("/ui/forget")
async def forget(request: Request, form: Posted, viewer: Looking) -> Response:
    """Forget the principal, once their name is typed exactly as the confirmation. The
    session ends at once (it shows the person being forgotten; the forgetting ends every other
    session showing them and deletes their tokens as it applies), so the progress page follows
    a sealed cookie instead."""
    if str(form.get("confirm") or "").strip() != viewer.principal:
        problem = f"Type {viewer.principal} exactly to confirm; nothing was sent."
        return await page(request, viewer, "forget.html", {"problem": problem}, status_code=422)
    position = await corrections_of(request).forget(
        tenant=viewer.tenant, principal=viewer.principal
    )
    response = RedirectResponse("/ui/forgetting", 303)
    sent = [
        viewer.tenant,
        viewer.principal,
        viewer.operator,
        position.project,
        position.offset,
        str(position.event_id),
    ]
    set_cookie(request, response, FORGETTING_COOKIE, keys(request).seal_json(b"forget", sent), 3600)
    await end(request, response)
    return response


@router.get("/ui/forgetting")
async def forgetting(request: Request) -> Response:
    """Follows the forgetting this browser sent until it has applied, then counts what is
    left of the person (0), shows the receipt (what went, and where the words still are); the
    session ended when the forgetting was sent."""
    sent = keys(request).open_json(b"forget", request.cookies.get(FORGETTING_COOKIE))
    if not isinstance(sent, list) or len(sent) != 6:
        return RedirectResponse("/ui/sign-in", 303)
    tenant, principal, operator, project, offset, event_id = sent
    async with reading(request.app.state.pool, principal=(tenant, principal)) as conn:
        mark = await watermark(conn, tenant=tenant, project=project)
        applied = mark.formed_through(offset)
        remaining = await words_left(conn, tenant=tenant, principal=principal) if applied else None
    receipt = (
        await erasures_of(request).receipt(
            event_id=uuid.UUID(event_id), tenant=tenant, principal=principal
        )
        if applied
        else None
    )
    context = {
        "viewer": None,
        "whom": principal if operator else "you",
        "applied": applied,
        "remaining": remaining,
        "receipt": receipt,
        "refresh_s": REFRESH_S,
    }
    return render(request, "forgetting.html", context, status_code=200 if applied else 202)
