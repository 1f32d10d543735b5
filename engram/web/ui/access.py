"""Who is looking: signing in and out of the inspector, the viewer of each page, CSRF checks.

The scope rules are the API's own (:class:`engram.web.auth.Caller`): a principal's token sees
that principal and nobody else; an operator's token names, at sign-in, the principal of its
tenant it will look at. Anything outside is a 404 page, exactly as the API answers 404.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Annotated, Literal
from urllib.parse import urlencode, urlsplit

from fastapi import APIRouter, Depends, Form, HTTPException, Request
from fastapi.responses import RedirectResponse, Response
from starlette.datastructures import FormData

from engram.formation.wording import YOU, Person
from engram.schemas.common import IDENTIFIER_PATTERN
from engram.service.sessions import end_session, open_session, session_of
from engram.service.tokens import grant_for
from engram.web.auth import Caller
from engram.web.ui.render import render
from engram.web.ui.session import (
    COOKIE_PATH,
    PRESESSION_COOKIE,
    SESSION_COOKIE,
    UiKeys,
    new_presession,
)

router = APIRouter(include_in_schema=False)

MAX_TOKEN_CHARS = 200
HOME = "/ui/beliefs"
MAX_LANDING_CHARS = 2000
_IDENTIFIER = re.compile(IDENTIFIER_PATTERN)
_LANDING = re.compile(r"/ui/(?!sign-)[\x21-\x7e]*")


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


def _dev_mode(request: Request) -> bool:
    return bool(request.app.state.settings.api.dev_mode)


async def viewer(request: Request) -> Viewer:
    """The viewer of this request, or :class:`SignInFirst`: the session its cookie names must
    be live (not ended, not expired, its token neither revoked nor expired), and the principal
    it shows still inside the token's grant."""
    cookie = request.cookies.get(SESSION_COOKIE)
    session = await session_of(request.app.state.pool, cookie)
    if session is None or cookie is None:
        raise SignInFirst
    if session.grant is None and not _dev_mode(request):
        raise SignInFirst  # a development-mode session, and the API is no longer in it
    try:
        tenant, principal = Caller(session.grant).principal(session.tenant, session.principal)
    except HTTPException:
        raise SignInFirst from None
    return Viewer(tenant, principal, session.operator, keys(request).csrf_token(cookie))


Looking = Annotated[Viewer, Depends(viewer)]


def _same_origin(request: Request) -> bool:
    """A browser's form post names its origin; one from another site is refused even before
    the token is compared (defence in depth beside ``SameSite=Lax``, which already keeps the
    session cookie off another site's posts)."""
    origin = request.headers.get("origin")
    if origin is None or origin == "null":
        return origin is None
    ours = urlsplit(str(request.base_url))
    theirs = urlsplit(origin)
    return (theirs.scheme, theirs.netloc) == (ours.scheme, ours.netloc)


async def _checked(request: Request, binding: str) -> FormData:
    """The posted form, once it comes from this origin and its CSRF token is the one bound to
    the cookie named ``binding``."""
    form = await request.form()
    presented = form.get("csrf")
    if not _same_origin(request) or not keys(request).csrf_valid(
        request.cookies.get(binding), presented if isinstance(presented, str) else None
    ):
        raise CsrfRefused
    return form


async def checked_form(request: Request) -> FormData:
    """A signed-in page's form: its token is bound to the session."""
    return await _checked(request, SESSION_COOKIE)


async def checked_sign_in(request: Request) -> FormData:
    """The sign-in form: its token is bound to the pre-session cookie (whatever session
    cookie, live or stale, the browser also sends)."""
    return await _checked(request, PRESESSION_COOKIE)


Posted = Annotated[FormData, Depends(checked_form)]
SigningIn = Annotated[FormData, Depends(checked_sign_in)]


def set_cookie(
    request: Request,
    response: Response,
    name: str,
    value: str,
    max_age: int,
    *,
    samesite: Literal["lax", "strict"] = "strict",
) -> None:
    """A cookie of the inspector's: HttpOnly, under /ui, Secure over HTTPS; SameSite=Strict
    unless it is the session's (Lax: a link from elsewhere opens the page it points to)."""
    response.set_cookie(
        name,
        value,
        max_age=max_age,
        path=COOKIE_PATH,
        httponly=True,
        samesite=samesite,
        secure=request.url.scheme == "https",
    )


def landing(wanted: object) -> str:
    """Where to go once signed in: the inspector page a person was sent to sign in from, if
    ``wanted`` is one (a path under /ui of printable ASCII, no ``..``, ``//`` or backslash —
    never another site, never the sign-in pages), else the beliefs."""
    if (
        isinstance(wanted, str)
        and len(wanted) <= MAX_LANDING_CHARS
        and _LANDING.fullmatch(wanted)
        and not any(part in wanted for part in ("..", "//", "\\"))
    ):
        return wanted
    return HOME


def sign_in_address(request: Request) -> str:
    """The sign-in page for a request that had no session: a GET comes back to where it was
    going once signed in."""
    if request.method != "GET":
        return "/ui/sign-in"
    wanted = request.url.path + (f"?{request.url.query}" if request.url.query else "")
    if landing(wanted) == HOME:
        return "/ui/sign-in"
    return "/ui/sign-in?" + urlencode({"next": wanted})


def _sign_in_page(
    request: Request, *, error: str | None = None, status: int = 200, going: str = HOME
) -> Response:
    presession = request.cookies.get(PRESESSION_COOKIE) or new_presession()
    response = render(
        request,
        "sign_in.html",
        {
            "viewer": None,
            "csrf": keys(request).csrf_token(presession),
            "error": error,
            "dev_mode": _dev_mode(request),
            "next": going if going != HOME else None,
        },
        status_code=status,
    )
    set_cookie(request, response, PRESESSION_COOKIE, presession, 3600)
    return response


@router.get("/ui")
async def home() -> RedirectResponse:
    return RedirectResponse(HOME, status_code=303)


@router.get("/ui/sign-in")
async def sign_in_form(request: Request) -> Response:
    return _sign_in_page(request, going=landing(request.query_params.get("next")))


@router.post("/ui/sign-in")
async def sign_in(
    request: Request,
    form: SigningIn,
    token: Annotated[str, Form(max_length=MAX_TOKEN_CHARS)] = "",
    principal: Annotated[str, Form(max_length=200)] = "",
) -> Response:
    """Check the pasted token (never echoed, never logged, never stored), then open a session
    and give the browser its id; back to the page that sent the person here, if any."""
    going = landing(form.get("next"))
    token, principal = token.strip(), principal.strip()
    grant = None if _dev_mode(request) else await grant_for(request.app.state.pool, token)
    if grant is None and not _dev_mode(request):
        return _sign_in_page(request, error="That token was not accepted.", status=401, going=going)
    if (grant is None or grant.operator) and not principal:
        return _sign_in_page(
            request,
            error="This is an operator's token: name the person whose memory to open.",
            status=422,
            going=going,
        )
    chosen = principal if grant is None or grant.principal is None else grant.principal
    if not _IDENTIFIER.fullmatch(chosen):
        return _sign_in_page(
            request, error="That is not a principal's name.", status=422, going=going
        )
    # A sign-in replaces whatever session this browser held: the old one ends with it.
    await end_session(request.app.state.pool, request.cookies.get(SESSION_COOKIE))
    session_id = await open_session(
        request.app.state.pool, grant=grant, principal=chosen, lifetime_s=_max_age(request)
    )
    response = RedirectResponse(going, status_code=303)
    set_cookie(request, response, SESSION_COOKIE, session_id, _max_age(request), samesite="lax")
    response.delete_cookie(PRESESSION_COOKIE, path=COOKIE_PATH)
    return response


async def end(request: Request, response: Response) -> None:
    """End this browser's session, in PostgreSQL and in the browser."""
    await end_session(request.app.state.pool, request.cookies.get(SESSION_COOKIE))
    response.delete_cookie(SESSION_COOKIE, path=COOKIE_PATH)


@router.post("/ui/sign-out")
async def sign_out(request: Request, form: Posted) -> Response:
    """Sign out: the session ends, so a copy of its cookie opens nothing afterwards."""
    del form
    response = RedirectResponse("/ui/sign-in", status_code=303)
    await end(request, response)
    return response
