"""Who is looking: signing in and out of the inspector, the viewer of each page, CSRF checks.

The scope rules are the API's own (:class:`engram.web.auth.Caller`): a principal's token sees
that principal and nobody else; an operator's token names, at sign-in, the principal of its
tenant it will look at. Anything outside is a 404 page, exactly as the API answers 404.
"""

from __future__ import annotations

import re
import time
import uuid
from dataclasses import dataclass
from typing import Annotated
from urllib.parse import urlsplit

from fastapi import APIRouter, Depends, Form, HTTPException, Request
from fastapi.responses import RedirectResponse, Response
from starlette.datastructures import FormData

from engram.formation.wording import YOU, Person
from engram.schemas.common import IDENTIFIER_PATTERN
from engram.service.tokens import Grant, grant_for
from engram.web.auth import Caller
from engram.web.ui.render import render
from engram.web.ui.session import (
    COOKIE_PATH,
    PRESESSION_COOKIE,
    SESSION_COOKIE,
    Session,
    UiKeys,
    new_presession,
)

router = APIRouter(include_in_schema=False)

MAX_TOKEN_CHARS = 200
DEV_MODE_GRANT = uuid.UUID(int=0)
"""The token id of a development-mode session, which has no token."""
_IDENTIFIER = re.compile(IDENTIFIER_PATTERN)


class SignInFirst(Exception):
    """No valid session: the page answers with a redirect to the sign-in form."""


class CsrfRefused(Exception):
    """A form post without this session's CSRF token (or from another origin)."""


@dataclass(frozen=True, slots=True)
class Viewer:
    """The person (or operator) looking, and whose memory they see."""

    tenant: str
    principal: str
    operator: bool
    csrf: str

    @property
    def person(self) -> Person:
        """How statements name the principal: "you" to the person, their id to an operator."""
        return Person(self.principal) if self.operator else YOU


def keys(request: Request) -> UiKeys:
    return request.app.state.ui_keys  # type: ignore[no-any-return]


def _max_age(request: Request) -> int:
    return int(request.app.state.settings.api.ui_session_s)


async def _grant(request: Request, session: Session) -> Grant | None:
    """The token's grant now (None when revoked, expired or unknown); in development mode
    there are no tokens and the session's names are the scope."""
    if request.app.state.settings.api.dev_mode:
        return Grant(session.tenant or "default", session.principal, DEV_MODE_GRANT)
    return await grant_for(request.app.state.pool, session.token)


async def viewer(request: Request) -> Viewer:
    """The viewer of this request, or :class:`SignInFirst`."""
    cookie = request.cookies.get(SESSION_COOKIE)
    session = keys(request).open(cookie, max_age_s=_max_age(request))
    if session is None or cookie is None:
        raise SignInFirst
    grant = await _grant(request, session)
    if grant is None:
        raise SignInFirst
    try:
        tenant, principal = Caller(grant).principal(session.tenant, session.principal)
    except HTTPException:
        raise SignInFirst from None
    return Viewer(tenant, principal, grant.principal is None, keys(request).csrf_token(cookie))


Looking = Annotated[Viewer, Depends(viewer)]


def _same_origin(request: Request) -> bool:
    """A browser's form post names its origin; one from another site is refused even before
    the token is compared (defence in depth beside ``SameSite=Strict``)."""
    origin = request.headers.get("origin")
    if origin is None or origin == "null":
        return origin is None
    ours = urlsplit(str(request.base_url))
    theirs = urlsplit(origin)
    return (theirs.scheme, theirs.netloc) == (ours.scheme, ours.netloc)


async def checked_form(request: Request) -> FormData:
    """The posted form, once its CSRF token matches this session (or pre-session)."""
    form = await request.form()
    binding = request.cookies.get(SESSION_COOKIE) or request.cookies.get(PRESESSION_COOKIE)
    presented = form.get("csrf")
    if not _same_origin(request) or not keys(request).csrf_valid(
        binding, presented if isinstance(presented, str) else None
    ):
        raise CsrfRefused
    return form


Posted = Annotated[FormData, Depends(checked_form)]


def set_cookie(request: Request, response: Response, name: str, value: str, max_age: int) -> None:
    """A cookie of the inspector's: HttpOnly, SameSite=Strict, under /ui, Secure over HTTPS."""
    response.set_cookie(
        name,
        value,
        max_age=max_age,
        path=COOKIE_PATH,
        httponly=True,
        samesite="strict",
        secure=request.url.scheme == "https",
    )


def _sign_in_page(request: Request, *, error: str | None = None, status: int = 200) -> Response:
    presession = request.cookies.get(PRESESSION_COOKIE) or new_presession()
    response = render(
        request,
        "sign_in.html",
        {
            "viewer": None,
            "csrf": keys(request).csrf_token(presession),
            "error": error,
            "dev_mode": request.app.state.settings.api.dev_mode,
        },
        status_code=status,
    )
    set_cookie(request, response, PRESESSION_COOKIE, presession, 3600)
    return response


@router.get("/ui")
async def home() -> RedirectResponse:
    return RedirectResponse("/ui/beliefs", status_code=303)


@router.get("/ui/sign-in")
async def sign_in_form(request: Request) -> Response:
    return _sign_in_page(request)


@router.post("/ui/sign-in")
async def sign_in(
    request: Request,
    form: Posted,
    token: Annotated[str, Form(max_length=MAX_TOKEN_CHARS)] = "",
    principal: Annotated[str, Form(max_length=200)] = "",
) -> Response:
    """Check the pasted token (never echoed, never logged), then seal it into the cookie."""
    del form  # checked: the CSRF token matched
    token, principal = token.strip(), principal.strip()
    dev_mode = request.app.state.settings.api.dev_mode
    grant = (
        Grant("default", principal or None, DEV_MODE_GRANT)
        if dev_mode
        else await grant_for(request.app.state.pool, token)
    )
    if grant is None:
        return _sign_in_page(request, error="That token was not accepted.", status=401)
    if grant.principal is None and not principal:
        return _sign_in_page(
            request,
            error="This is an operator's token: name the person whose memory to open.",
            status=422,
        )
    chosen = grant.principal or principal
    if chosen != grant.principal and not _IDENTIFIER.fullmatch(chosen):
        return _sign_in_page(request, error="That is not a principal's name.", status=422)
    session = Session(token, grant.tenant, chosen, int(time.time()))
    response = RedirectResponse("/ui/beliefs", status_code=303)
    set_cookie(request, response, SESSION_COOKIE, keys(request).seal(session), _max_age(request))
    response.delete_cookie(PRESESSION_COOKIE, path=COOKIE_PATH)
    return response


@router.post("/ui/sign-out")
async def sign_out(form: Posted) -> Response:
    del form
    response = RedirectResponse("/ui/sign-in", status_code=303)
    response.delete_cookie(SESSION_COOKIE, path=COOKIE_PATH)
    return response
