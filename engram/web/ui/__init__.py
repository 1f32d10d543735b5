"""The memory inspector: pages under ``/ui`` for the person a memory is about.

Server-rendered (Jinja2, autoescaped), no script, one hand-written stylesheet; readable and
usable without JavaScript, by keyboard, at a phone's width. Signing in, scope and CSRF are
:mod:`.access`; the reading pages :mod:`.pages`; corrections, deletion and forgetting
:mod:`.changes`, through the same service the API uses; the headers :mod:`.security`. None of
these routes is part of the HTTP contract (``schemas/openapi.json``).
"""

from __future__ import annotations

from fastapi import FastAPI, Request
from fastapi.exception_handlers import http_exception_handler
from fastapi.responses import RedirectResponse, Response
from fastapi.staticfiles import StaticFiles
from starlette.exceptions import HTTPException as StarletteHTTPException

from engram.infra.settings import Settings
from engram.web.ui import access, changes, pages
from engram.web.ui.render import render
from engram.web.ui.security import UiHeaders
from engram.web.ui.session import COOKIE_PATH, SESSION_COOKIE, UiKeys

ROUTERS = (access.router, pages.router, changes.router)


async def _sign_in_first(request: Request, error: Exception) -> Response:
    """To the sign-in page (and back here afterwards, for a page). Only a cookie this request
    carried is cleared, since its session is over: a request that came without one — a link
    followed from another site under ``SameSite=Strict``, a cross-site post — must never end a
    session the browser still holds."""
    del error
    response = RedirectResponse(access.sign_in_address(request), status_code=303)
    if SESSION_COOKIE in request.cookies:
        response.delete_cookie(SESSION_COOKIE, path=COOKIE_PATH)
    return response


async def _not_found(request: Request, error: Exception) -> Response:
    """A path under /ui that serves nothing is a page too; elsewhere FastAPI's own answer."""
    if request.url.path.startswith(COOKIE_PATH + "/"):
        return render(request, "nowhere.html", {"viewer": None}, status_code=404)
    assert isinstance(error, StarletteHTTPException)
    return await http_exception_handler(request, error)


async def _csrf_refused(request: Request, error: Exception) -> Response:
    del error
    return render(request, "forbidden.html", {"viewer": None}, status_code=403)


def install(app: FastAPI, settings: Settings) -> None:
    """Serve the inspector from ``app``: its routes, stylesheet, headers and the answers to a
    missing session and a forged form. A weak ``ENGRAM_API_UI_SECRET`` stops it here
    (:class:`~engram.web.ui.session.UiSecretTooWeak`), before anything is served."""
    secret = settings.api.ui_secret
    app.state.ui_keys = UiKeys(None if secret is None else secret.get_secret_value())
    app.add_middleware(UiHeaders)
    app.add_exception_handler(access.SignInFirst, _sign_in_first)
    app.add_exception_handler(access.CsrfRefused, _csrf_refused)
    app.add_exception_handler(404, _not_found)
    for router in ROUTERS:
        app.include_router(router)
    app.mount(
        "/ui/static",
        StaticFiles(packages=[("engram.web.ui", "static")]),
        name="ui-static",
    )
