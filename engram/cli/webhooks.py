"""``engram webhooks``: the endpoints a project's notifications go to, and their deliveries.

Every command names the tenant (``--tenant``) and reaches only that tenant's endpoints. A
secret is printed once, when it is made (``add``, ``rotate``); the database keeps it only
wrapped by ENGRAM_KEYS_KEK, which these commands therefore need.
"""

from __future__ import annotations

import asyncio
import sys
import uuid
from collections.abc import Awaitable, Callable
from typing import Annotated, Any, TypeVar

import asyncpg
import orjson
import typer

from engram.cli.failures import refuse
from engram.cli.identifiers import identifier
from engram.cli.output import console, err, print_rows
from engram.cli.tokens import parse_duration
from engram.infra.db import connect
from engram.infra.errors import EngramFailure
from engram.infra.settings import Settings, load_settings
from engram.notifications.destinations import DestinationPolicy
from engram.notifications.endpoints import (
    enable_endpoint,
    find_endpoint,
    list_endpoints,
    register,
    remove_endpoint,
    rotate_secret,
)
from engram.notifications.ping import ping
from engram.notifications.queue import list_deliveries, retry_deliveries, retry_endpoint
from engram.notifications.vault import SecretVault
from engram.notifications.views import created_view, endpoint_view

webhooks_app = typer.Typer(
    no_args_is_help=True,
    help="Webhook endpoints: signed notifications that a project's memory changed (no words).",
)
T = TypeVar("T")
Tenant = Annotated[str, typer.Option(callback=identifier, help="The tenant the endpoint is in.")]
Json = Annotated[bool, typer.Option("--json", help="JSON lines.")]


def _run(call: Callable[[asyncpg.Connection, Settings], Awaitable[T]], doing: str) -> T:
    settings = load_settings()

    async def _go() -> T:
        conn = await connect(settings.database)
        try:
            return await call(conn, settings)
        finally:
            await conn.close()

    try:
        return asyncio.run(_go())
    except EngramFailure as failure:
        refuse(failure, doing)


def _vault(settings: Settings) -> SecretVault:
    return SecretVault.from_settings(settings.keys)


def _events(values: list[str] | None) -> list[str] | None:
    """``--events a,b --events c``: every kind named, in any of those spellings."""
    if not values:
        return None
    return [kind.strip() for value in values for kind in value.split(",") if kind.strip()]


@webhooks_app.command("add")
def add(
    tenant: Tenant,
    project: Annotated[str, typer.Option(callback=identifier, help="Whose changes to send.")],
    url: Annotated[str, typer.Option(help="Where to send them: https, a public address.")],
    events: Annotated[
        list[str] | None,
        typer.Option(help="Kinds to send (repeat or comma-separate); every kind by default."),
    ] = None,
    json: Json = False,
) -> None:
    """Register an endpoint; print its id and signing secret (shown this once)."""

    async def _add(conn: asyncpg.Connection, settings: Settings) -> dict[str, Any]:
        policy = DestinationPolicy(settings.webhooks)
        endpoint, secret = await register(
            conn,
            _vault(settings),
            policy,
            tenant=tenant,
            project=project,
            url=url,
            events=_events(events),
        )
        return created_view(endpoint, secret).model_dump(mode="json")

    created = _run(_add, "not added")
    if json:
        _json_line(created)
        return
    err.print(f"endpoint {created['id']} for {tenant}/{project}; its signing secret is shown once:")
    console.print(created["secret"], soft_wrap=True, highlight=False)


@webhooks_app.command("list")
def list_(
    tenant: Tenant,
    project: Annotated[
        str | None, typer.Option(callback=identifier, help="Only this project's endpoints.")
    ] = None,
    json: Json = False,
) -> None:
    """Every endpoint of the tenant: id, project, URL, kinds, whether disabled and why."""

    async def _list(conn: asyncpg.Connection, _: Settings) -> list[dict[str, Any]]:
        found = await list_endpoints(conn, tenant=tenant, project=project)
        return [endpoint_view(e).model_dump(mode="json") for e in found]

    rows = _run(_list, "not listed")
    columns = {
        "id": lambda r: str(r["id"]),
        "project": lambda r: str(r["project"]),
        "url": lambda r: str(r["url"]),
        "events": lambda r: ", ".join(r["events"]),
        "disabled": lambda r: r["disabled_reason"] or "",
    }
    print_rows(rows, json=json, title=f"webhook endpoints of {tenant}", columns=columns)


@webhooks_app.command("remove")
def remove(
    endpoint_id: Annotated[uuid.UUID, typer.Argument(help="The endpoint's id.")],
    tenant: Tenant,
) -> None:
    """Remove an endpoint, its secrets and every delivery owed to it."""

    async def _remove(conn: asyncpg.Connection, _: Settings) -> None:
        await remove_endpoint(conn, tenant=tenant, endpoint_id=endpoint_id)

    _run(_remove, "not removed")
    console.print(f"removed {endpoint_id}")


@webhooks_app.command("test")
def test(
    endpoint_id: Annotated[uuid.UUID, typer.Argument(help="The endpoint's id.")],
    tenant: Tenant,
) -> None:
    """Send the endpoint one signed webhook.test notification now and say what it answered
    (exit 1 unless it took it)."""

    async def _ping(conn: asyncpg.Connection, settings: Settings) -> tuple[int | None, str | None]:
        status, failure = await ping(
            conn, _vault(settings), settings.webhooks, tenant=tenant, endpoint_id=endpoint_id
        )
        return status, None if failure is None else failure.error

    status, failure = _run(_ping, "not sent")
    if failure is None:
        console.print(f"delivered: the endpoint answered {status}")
        return
    err.print(f"[red]not delivered:[/red] {failure}")
    raise typer.Exit(1)


@webhooks_app.command("deliveries")
def deliveries(
    tenant: Tenant,
    endpoint: Annotated[uuid.UUID | None, typer.Option(help="Only this endpoint's.")] = None,
    failed: Annotated[
        bool, typer.Option("--failed", help="Only the parked ones (failed for good).")
    ] = False,
    limit: Annotated[int, typer.Option(min=1, max=10_000, help="At most this many.")] = 100,
    json: Json = False,
) -> None:
    """Deliveries, newest first: kind, state, attempts, the last answer; never a body."""

    async def _list(conn: asyncpg.Connection, _: Settings) -> list[dict[str, Any]]:
        if endpoint is not None:
            await find_endpoint(conn, tenant=tenant, endpoint_id=endpoint)
        found = await list_deliveries(
            conn, tenant=tenant, endpoint_id=endpoint, failed=failed, limit=limit
        )
        return [d.model_dump(mode="json") for d in found]

    rows = _run(_list, "not listed")
    columns = {
        "id": lambda r: str(r["id"]),
        "type": lambda r: str(r["type"]),
        "state": lambda r: str(r["state"]),
        "attempts": lambda r: str(r["attempts"]),
        "last": lambda r: str(r["last_error"] or r["last_status"] or ""),
        "next": lambda r: str(r["next_attempt_at"] or ""),
    }
    title = f"{'parked' if failed else 'webhook'} deliveries of {tenant}"
    print_rows(rows, json=json, title=title, columns=columns)


@webhooks_app.command("retry")
def retry(
    tenant: Tenant,
    delivery_ids: Annotated[
        list[uuid.UUID] | None, typer.Argument(help="Parked deliveries to send again.")
    ] = None,
    endpoint: Annotated[
        uuid.UUID | None,
        typer.Option(help="Enable this endpoint again and send all its parked deliveries."),
    ] = None,
) -> None:
    """Send parked deliveries again, with fresh attempts."""
    if not delivery_ids and endpoint is None:
        err.print("[red]name parked deliveries, or --endpoint ID[/red]")
        raise typer.Exit(2)

    async def _retry(conn: asyncpg.Connection, _: Settings) -> int:
        async with conn.transaction():
            requeued = 0
            if endpoint is not None:
                await enable_endpoint(conn, tenant=tenant, endpoint_id=endpoint)
                requeued += await retry_endpoint(conn, tenant=tenant, endpoint_id=endpoint)
            if delivery_ids:
                requeued += await retry_deliveries(conn, tenant=tenant, delivery_ids=delivery_ids)
            return requeued

    requeued = _run(_retry, "not retried")
    enabled = f"enabled {endpoint}; " if endpoint is not None else ""
    console.print(f"{enabled}{requeued} delivery(ies) due again")


def _overlap_s(text: str | None, default: float) -> float:
    if text is None:
        return default
    if text.strip() in ("0", "0s"):
        return 0.0
    return parse_duration(text).total_seconds()


def _json_line(value: dict[str, Any]) -> None:
    sys.stdout.write(orjson.dumps(value, default=str).decode() + "\n")


@webhooks_app.command("rotate")
def rotate(
    endpoint_id: Annotated[uuid.UUID, typer.Argument(help="The endpoint's id.")],
    tenant: Tenant,
    overlap: Annotated[
        str | None,
        typer.Option(
            help="How long the old secret signs too, e.g. 24h, 0s (ENGRAM_WEBHOOKS_ROTATION_"
            "OVERLAP_S by default)."
        ),
    ] = None,
    json: Json = False,
) -> None:
    """Give the endpoint a new signing secret (shown once); the old one signs beside it for
    the overlap, so the receiver can switch without refusing a delivery."""

    async def _rotate(conn: asyncpg.Connection, settings: Settings) -> dict[str, Any]:
        overlap_s = _overlap_s(overlap, settings.webhooks.rotation_overlap_s)
        secret, until = await rotate_secret(
            conn, _vault(settings), tenant=tenant, endpoint_id=endpoint_id, overlap_s=overlap_s
        )
        return {"id": str(endpoint_id), "secret": secret, "previous_valid_until": until}

    rotated = _run(_rotate, "not rotated")
    if json:
        _json_line(rotated)
        return
    until = rotated["previous_valid_until"]
    err.print(
        f"new secret for {endpoint_id}"
        + (f"; the old one also signs until {until:%Y-%m-%d %H:%M UTC}" if until else "")
        + "; it is shown once:"
    )
    console.print(rotated["secret"], soft_wrap=True, highlight=False)
