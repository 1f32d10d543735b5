"""The inspector's reading pages: beliefs (with the question box), one belief, what was refused.

Each reads through the same functions the API's routes call (``engram.projections.reads.pages``,
``engram.projections.reads.queries``, ``engram.projections.reads.recall``, ``engram.projections.reads.refusals``), in the generation
that serves the principal (:func:`generations.reading.reading`), scoped by the viewer — so a
page can show nothing the API would not. Every page says how fresh it is.
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Mapping
from typing import Any

import asyncpg
from fastapi import APIRouter, Request
from fastapi.responses import Response

from engram.formation.vocabulary import RELATIONS, BeliefType
from engram.formation.wording import kept_as_history, readable_refusal, readable_statement
from engram.generations.reading import reading
from engram.projections.messages.conversation import messages_around
from engram.projections.reads.cursor import InvalidCursor
from engram.projections.reads.freshness import principal_progress
from engram.projections.reads.pages import BeliefFilter, page_beliefs
from engram.projections.reads.queries import get_belief
from engram.projections.reads.recall import UnsearchableQuery, recall
from engram.projections.reads.refusals import RefusalFilter, page_refusals
from engram.schemas.api import BeliefDetail, BeliefView
from engram.schemas.common import IDENTIFIER_PATTERN
from engram.web.ui.access import Looking, Viewer
from engram.web.ui.render import render
from engram.web.ui.words import CORRECTION_CHOICES, freshness_words, quote_in_message

router = APIRouter(include_in_schema=False)

PAGE = 25
STATUSES = ("provisional", "active", "superseded", "expired", "retired", "retracted")
_IDENTIFIER = re.compile(IDENTIFIER_PATTERN)
MAX_QUESTION_CHARS = 500


def say(viewer: Viewer, belief: BeliefView) -> str:
    """A belief as this viewer reads it ("You live in Lisbon"; "ana lives in …" to an operator)."""
    return readable_statement(
        subject=belief.subject,
        subject_is_principal=belief.subject == "speaker",
        relation=belief.relation,
        obj=belief.object,
        facet=belief.facet,
        retracted=belief.polarity == "retract",
        person=viewer.person,
        ended=kept_as_history(belief.status, belief.valid_to),
    )


async def page(
    request: Request,
    viewer: Viewer,
    template: str,
    context: Mapping[str, Any],
    *,
    status_code: int = 200,
) -> Response:
    """A page for a signed-in viewer: the viewer, the form token and the freshness line."""
    async with reading(request.app.state.pool, principal=(viewer.tenant, viewer.principal)) as conn:
        progress = await principal_progress(conn, tenant=viewer.tenant, principal=viewer.principal)
    return render(
        request,
        template,
        {
            "viewer": viewer,
            "csrf": viewer.csrf,
            "freshness": freshness_words(progress),
            "say": lambda belief: say(viewer, belief),
            "say_refusal": lambda r: readable_refusal(r.statement, r.relation, viewer.person),
            **context,
        },
        status_code=status_code,
    )


async def not_found(request: Request, viewer: Viewer) -> Response:
    """The 404 page: the same answer whether the belief is someone else's or nobody's."""
    return await page(request, viewer, "not_found.html", {}, status_code=404)


def _filters(request: Request) -> tuple[BeliefFilter, dict[str, str], list[str]]:
    """The list's filters from the query, each checked; what was wrong, in words."""
    query = request.query_params
    shown = {name: query.get(name, "").strip() for name in _FILTER_NAMES}
    errors: list[str] = []
    if "\x00" in shown["q"]:
        # PostgreSQL refuses a NUL in text, and the question box would echo it back.
        errors.append("A question cannot contain a NUL character; nothing was asked.")
        shown["q"] = ""
    project = shown["project"] or None
    if project is not None and not _IDENTIFIER.fullmatch(project):
        errors.append("A project's name has letters, digits and . _ : @ - only.")
        project = None
    minimum = None
    if shown["min_confidence"]:
        try:
            minimum = float(shown["min_confidence"])
            if not 0 <= minimum <= 1:
                raise ValueError
        except ValueError:
            errors.append("Confidence is a number from 0 to 1.")
            minimum = None
    status = shown["status"] if shown["status"] in STATUSES else None
    belief_type = shown["belief_type"] if shown["belief_type"] in _TYPES else None
    relation = shown["relation"] if shown["relation"] in _RELATIONS else None
    chosen = BeliefFilter(
        include_all=shown["when"] == "all",
        project=project,
        status=status,
        belief_type=belief_type,
        relation=relation,
        min_confidence=minimum,
    )
    return chosen, shown, errors


_FILTER_NAMES = ("q", "project", "belief_type", "relation", "status", "min_confidence", "when")
_TYPES = tuple(t.value for t in BeliefType)
_RELATIONS = tuple(r.name for r in RELATIONS)


@router.get("/ui/beliefs")
async def beliefs(request: Request, viewer: Looking) -> Response:
    """Current (or every) belief, filtered; with ``q``, what recall answers to the question."""
    chosen, shown, errors = _filters(request)
    cursor = request.query_params.get("cursor") or None
    question = shown["q"][:MAX_QUESTION_CHARS]
    context: dict[str, Any] = {
        "shown": shown,
        "errors": errors,
        "types": _TYPES,
        "relations": _RELATIONS,
        "statuses": STATUSES,
        "notice": request.query_params.get("notice"),
        "items": [],
        "messages": [],
        "next_cursor": None,
    }
    async with reading(request.app.state.pool, principal=(viewer.tenant, viewer.principal)) as conn:
        try:
            if question:
                await _recalled(conn, viewer, question, chosen.project, context)
            else:
                found = await page_beliefs(
                    conn,
                    tenant=viewer.tenant,
                    principal=viewer.principal,
                    chosen=chosen,
                    limit=PAGE,
                    cursor=cursor,
                )
                context.update(items=found.items, next_cursor=found.next_cursor)
        except (UnsearchableQuery, InvalidCursor) as error:
            errors.append(str(error))
    return await page(request, viewer, "beliefs.html", context, status_code=200)


async def _recalled(
    conn: asyncpg.Connection,
    viewer: Viewer,
    question: str,
    project: str | None,
    context: dict[str, Any],
) -> None:
    """The question box: the beliefs recall finds, then the person's own words that answer."""
    answer = await recall(
        conn,
        tenant=viewer.tenant,
        principal=viewer.principal,
        query=question,
        project=project,
        limit=PAGE,
    )
    context["items"] = [hit.belief for hit in answer.hits if hit.kind == "belief"]
    context["messages"] = [hit for hit in answer.hits if hit.kind == "message"]


async def load_belief(request: Request, viewer: Viewer, belief_id: str) -> BeliefDetail | None:
    """The viewer's belief of that id; None for a malformed id, someone else's, or none."""
    try:
        wanted = uuid.UUID(belief_id)
    except ValueError:
        return None
    async with reading(request.app.state.pool, principal=(viewer.tenant, viewer.principal)) as conn:
        return await get_belief(
            conn, tenant=viewer.tenant, principal=viewer.principal, belief_id=wanted
        )


@router.get("/ui/beliefs/{belief_id}")
async def belief(request: Request, viewer: Looking, belief_id: str) -> Response:
    """One belief: its quotes inside their messages, its history, its corrections, its run."""
    detail = await load_belief(request, viewer, belief_id)
    if detail is None:
        return await not_found(request, viewer)
    quotes = []
    async with reading(request.app.state.pool, principal=(viewer.tenant, viewer.principal)) as conn:
        for evidence in detail.belief.evidence:
            around = await messages_around(
                conn,
                tenant=viewer.tenant,
                principal=viewer.principal,
                episode_id=evidence.episode_id,
                message_ordinal=evidence.message_ordinal,
            )
            quotes.append(
                {
                    "evidence": evidence,
                    "messages": [
                        {
                            "message": message,
                            "split": quote_in_message(
                                message.content,
                                evidence.quote,
                                evidence.span_start,
                                evidence.span_end,
                            )
                            if message.quoted
                            else None,
                        }
                        for message in around
                    ],
                }
            )
    context = {
        "detail": detail,
        "quotes": quotes,
        "choices": CORRECTION_CHOICES,
        "notice": request.query_params.get("notice"),
    }
    return await page(request, viewer, "belief.html", context)


@router.get("/ui/refused")
async def refused(request: Request, viewer: Looking) -> Response:
    """What Engram declined to remember, why, and the words it declined."""
    cursor = request.query_params.get("cursor") or None
    errors: list[str] = []
    items: list[Any] = []
    next_cursor = None
    async with reading(request.app.state.pool, principal=(viewer.tenant, viewer.principal)) as conn:
        try:
            found = await page_refusals(
                conn,
                tenant=viewer.tenant,
                principal=viewer.principal,
                chosen=RefusalFilter(),
                limit=PAGE,
                cursor=cursor,
            )
            items, next_cursor = found.items, found.next_cursor
        except InvalidCursor as error:
            errors.append(str(error))
    return await page(
        request,
        viewer,
        "refused.html",
        {"items": items, "next_cursor": next_cursor, "errors": errors},
    )
