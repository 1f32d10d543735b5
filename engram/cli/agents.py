"""``engram mcp``: serve Engram's memory to agents over the Model Context Protocol."""

from __future__ import annotations

import asyncio
from enum import StrEnum
from typing import Annotated

import typer

from engram.cli.failures import refuse
from engram.cli.output import err
from engram.infra.errors import EngramFailure
from engram.infra.settings import load_settings


class Transport(StrEnum):
    STDIO = "stdio"
    HTTP = "http"


def mcp(
    transport: Annotated[
        Transport, typer.Option(help="stdio: one agent, one principal; http: streamable HTTP.")
    ] = Transport.STDIO,
    token: Annotated[
        str | None,
        typer.Option(
            help="stdio: the principal's token (prefer ENGRAM_MCP_TOKEN: a flag shows in `ps`)."
        ),
    ] = None,
    host: Annotated[str | None, typer.Option(help="http: bind address.")] = None,
    port: Annotated[int | None, typer.Option(help="http: port.")] = None,
) -> None:
    """Serve the recall, remember, correct and delete tools to an MCP client. Over stdio it acts for the
    principal of ENGRAM_MCP_TOKEN (or --token); over HTTP, for the principal of each request's
    bearer token. Tokens come from `engram tokens create --principal NAME`."""
    # Lazy, as in `engram api`: only this command pays for importing the MCP SDK.
    from engram.mcp_server.access import Refused
    from engram.mcp_server.server import HTTP_PATH, serve_http, serve_stdio

    settings = load_settings()
    try:
        if transport is Transport.STDIO:
            given = token or (settings.mcp.token.get_secret_value() if settings.mcp.token else None)
            asyncio.run(serve_stdio(settings, given))
            return
        bind, bound = host or settings.mcp.host, port or settings.mcp.port
        err.print(f"MCP over streamable HTTP at http://{bind}:{bound}{HTTP_PATH}; bearer tokens")
        asyncio.run(serve_http(settings, host=bind, port=bound))
    except Refused as refused:
        refuse(refused, "refused")
    except EngramFailure as failure:  # a missing or wrong key-encryption key, at start
        refuse(failure, "not started")
