"""``engram tokens``: create, list and revoke API tokens. A token is printed once, at creation;
the database keeps only its SHA-256."""

from __future__ import annotations

import asyncio
import re
import uuid
from collections.abc import Awaitable, Callable
from datetime import timedelta
from typing import Annotated, TypeVar

import asyncpg
import typer

from engram.cli.identifiers import identifier
from engram.cli.output import console, err, field, print_rows
from engram.infra.db import connect
from engram.infra.settings import load_settings
from engram.service.tokens import create_token, list_tokens, revoke_token

tokens_app = typer.Typer(no_args_is_help=True, help="API tokens: create, list, revoke.")
T = TypeVar("T")
_DURATION = re.compile(r"^(\d+)([smhdw])$")
_UNITS = {"s": "seconds", "m": "minutes", "h": "hours", "d": "days", "w": "weeks"}


def parse_duration(text: str) -> timedelta:
    """``30d``, ``12h``, ``90m``, ``2w``, ``45s``: a positive whole number and a unit."""
    match = _DURATION.match(text.strip())
    if match is None or int(match[1]) == 0:
        raise typer.BadParameter("a positive number and a unit, e.g. 30d, 12h, 90m, 2w")
    return timedelta(**{_UNITS[match[2]]: int(match[1])})


def _run(call: Callable[[asyncpg.Connection], Awaitable[T]]) -> T:
    async def _go() -> T:
        conn = await connect(load_settings().database)
        try:
            return await call(conn)
        finally:
            await conn.close()

    return asyncio.run(_go())


@tokens_app.command("create")
def create(
    tenant: Annotated[str, typer.Option(callback=identifier, help="The tenant the token reaches.")],
    principal: Annotated[
        str | None,
        typer.Option(callback=identifier, help="The one principal it reads and writes for."),
    ] = None,
    operator: Annotated[
        bool, typer.Option("--operator", help="Every principal of the tenant instead.")
    ] = False,
    expires_in: Annotated[
        str | None, typer.Option(help="Lifetime, e.g. 30d, 12h (default: until revoked).")
    ] = None,
) -> None:
    """Create a token and print it — the only time it is shown."""
    if (principal is None) != operator:
        err.print("[red]say whose token it is: --principal P or --operator (not both)[/red]")
        raise typer.Exit(2)
    lifetime = parse_duration(expires_in) if expires_in else None
    record, token = _run(
        lambda conn: create_token(conn, tenant=tenant, principal=principal, expires_in=lifetime)
    )
    who = f"{tenant}/{principal}" if principal else f"{tenant} (operator)"
    expiry = f", expires {record.expires_at:%Y-%m-%d %H:%M UTC}" if record.expires_at else ""
    err.print(f"token {record.token_id} for {who}{expiry}; it is shown once, store it now:")
    console.print(token, soft_wrap=True, highlight=False)


@tokens_app.command("list")
def list_(
    tenant: Annotated[
        str | None, typer.Option(callback=identifier, help="Only this tenant's tokens.")
    ] = None,
    json: Annotated[bool, typer.Option("--json", help="JSON lines.")] = False,
) -> None:
    """Every token's id, scope, expiry and revocation — never the token."""
    records = _run(lambda conn: list_tokens(conn, tenant=tenant))
    rows = [vars(r) for r in records]  # --json: a real boolean, ISO 8601 times, null for none
    columns = {
        name: field(name)
        for name in ("token_id", "tenant", "principal", "operator", "expires_at", "revoked_at")
    }
    print_rows(rows, json=json, title="API tokens", columns=columns)


@tokens_app.command("revoke")
def revoke(token_id: Annotated[uuid.UUID, typer.Argument(help="The token's id.")]) -> None:
    """Revoke a token; the API refuses it from the next request on."""
    if not _run(lambda conn: revoke_token(conn, token_id)):
        err.print(f"[red]no unrevoked token {token_id}[/red]")
        raise typer.Exit(1)
    console.print(f"revoked {token_id}")
