"""Whose memory an MCP call reaches: the principal of an API token, checked on every call.

A token is resolved as the HTTP API resolves it (:func:`engram.service.tokens.grant_for`:
stored hashed, revocation and expiry checked in the same query), so revoking a token stops an
agent at its next call. An MCP server acts for one person, so an operator's token — which names
a tenant, not a principal — is refused too. Over HTTP, :class:`BearerGate` refuses a request
without a valid token before the MCP layer sees it (401, no session is created), and each tool
call resolves the token its own request carries.
"""

from __future__ import annotations

from collections.abc import Callable

import asyncpg
import orjson
from mcp.server.mcpserver import Context
from starlette.types import ASGIApp, Receive, Scope, Send

from engram.infra.errors import EngramFailure
from engram.service.tokens import grant_for

Principal = tuple[str, str]
"""(tenant, principal)."""
TokenOf = Callable[[Context], str | None]
"""Where a call's token comes from: the server's own (stdio) or the request's header (HTTP)."""


class Refused(EngramFailure, PermissionError):
    """No usable token; the message says what to do."""

    code = "refused"


class OperatorRefused(Refused):
    """A valid token, but an operator's: it names no one to act for."""

    code = "operator_refused"


NO_TOKEN = (
    "a token is required: run `engram tokens create --principal NAME`, then pass it as "
    "ENGRAM_MCP_TOKEN (stdio) or as `Authorization: Bearer <token>` (HTTP)"
)
BAD_TOKEN = "the token is unknown, revoked or expired; create a new one with `engram tokens create`"
OPERATOR = (
    "an operator token acts for no one in particular; an MCP server acts for one person: use a "
    "principal's token (`engram tokens create --principal NAME`)"
)


async def principal_of(pool: asyncpg.Pool, token: str | None) -> Principal:
    """The tenant and principal ``token`` acts for, or :class:`Refused`."""
    if not token:
        raise Refused(NO_TOKEN)
    grant = await grant_for(pool, token)
    if grant is None:
        raise Refused(BAD_TOKEN)
    if grant.principal is None:
        raise OperatorRefused(OPERATOR)
    return grant.tenant, grant.principal


def bearer(authorization: str | None) -> str | None:
    """The token of an ``Authorization: Bearer <token>`` header value."""
    scheme, _, token = (authorization or "").partition(" ")
    return token.strip() or None if scheme.lower() == "bearer" else None


def header_token(ctx: Context) -> str | None:
    """The bearer token of the HTTP request that carried this call."""
    headers = ctx.headers or {}
    return bearer(headers.get("authorization"))


class BearerGate:
    """ASGI middleware: an HTTP request without a principal's valid token is answered 401 (403
    for an operator's) before it reaches the MCP endpoint."""

    def __init__(self, app: ASGIApp, pool: asyncpg.Pool) -> None:
        self._app = app
        self._pool = pool

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self._app(scope, receive, send)
            return
        headers = dict(scope["headers"])
        authorization = headers.get(b"authorization", b"").decode("latin-1")
        try:
            await principal_of(self._pool, bearer(authorization))
        except OperatorRefused as refused:
            await _refuse(send, 403, str(refused))
            return
        except Refused as refused:
            await _refuse(send, 401, str(refused))
            return
        await self._app(scope, receive, send)


async def _refuse(send: Send, status: int, detail: str) -> None:
    body = orjson.dumps({"detail": detail})
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [
                (b"content-type", b"application/json"),
                (b"content-length", str(len(body)).encode()),
                (b"www-authenticate", b"Bearer"),
            ],
        }
    )
    await send({"type": "http.response.body", "body": body})
