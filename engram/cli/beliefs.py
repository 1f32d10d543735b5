"""``engram beliefs`` and ``engram refusals``: read what formed and what was refused, and
correct or delete a belief. Writes go through the same service as the API and append to the
episodic log; ``--wait`` returns once the projector has applied them."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Awaitable, Callable
from datetime import datetime
from typing import Annotated, Any

import typer

from engram.cli.output import BELIEF_COLUMNS, console, err, field, print_rows, query, quotes
from engram.service.corrections import (
    BeliefNotFound,
    Corrections,
    InvalidCorrection,
    LogPosition,
)
from engram.shared.db import create_pool
from engram.shared.settings import load_settings
from engram.shared.waiting import FormationTimeout
from projections.queries import get_belief, list_beliefs, list_refusals
from schemas.corrections import CorrectionKind

beliefs_app = typer.Typer(no_args_is_help=True, help="Read, correct and delete what has formed.")
refusals_app = typer.Typer(no_args_is_help=True, help="Read what was refused, with its words.")

Tenant = Annotated[str, typer.Option(help="Tenant of the principal.")]
Principal = Annotated[str, typer.Option(help="Whose beliefs.")]
Json = Annotated[bool, typer.Option("--json", help="JSON lines.")]
Wait = Annotated[bool, typer.Option(help="Wait until the change is applied.")]
Timeout = Annotated[float, typer.Option(help="Seconds to wait with --wait.")]
GenerationOption = Annotated[
    str | None, typer.Option("--generation", help="Read this generation (default: the live one).")
]


@beliefs_app.command("list")
def beliefs_list(
    principal: Principal,
    tenant: Tenant = "default",
    all_: Annotated[bool, typer.Option("--all", help="Include superseded and retired.")] = False,
    as_of: Annotated[datetime | None, typer.Option(help="What was believed at this time.")] = None,
    project: Annotated[str | None, typer.Option(help="Only what applies in this project.")] = None,
    min_confidence: Annotated[
        float | None,
        typer.Option(
            "--min-confidence",
            min=0.0,
            max=1.0,
            help="Only beliefs whose confidence, decayed to now (or --as-of), is at least this.",
        ),
    ] = None,
    json: Json = False,
    generation: GenerationOption = None,
) -> None:
    """List beliefs with their evidence (current by default)."""
    rows = query(
        lambda conn: list_beliefs(
            conn,
            tenant=tenant,
            principal=principal,
            include_all=all_,
            as_of=as_of,
            project=project,
            min_confidence=min_confidence,
        ),
        generation,
        principal=(tenant, principal),
    )
    print_rows(rows, json=json, title=f"beliefs of {tenant}/{principal}", columns=BELIEF_COLUMNS)


@beliefs_app.command("show")
def beliefs_show(
    belief_id: Annotated[uuid.UUID, typer.Argument(help="The belief's id.")],
    principal: Principal,
    tenant: Tenant = "default",
    json: Json = False,
    generation: GenerationOption = None,
) -> None:
    """One belief: all its evidence, its history and the corrections that touched it."""

    async def read(conn: Any) -> list[Any]:
        found = await get_belief(conn, tenant=tenant, principal=principal, belief_id=belief_id)
        return [] if found is None else [found]

    rows = query(read, generation, principal=(tenant, principal))
    if not rows:
        err.print(f"[red]no belief {belief_id} for {tenant}/{principal}[/red]")
        raise typer.Exit(1)
    [detail] = rows
    if json:
        print_rows(rows, json=True, title="", columns={})
        return
    belief = detail["belief"]
    console.print(
        f"[bold]{belief['statement']}[/bold]  ({belief['status']}, {belief['confidence']})"
    )
    console.print(quotes(belief))
    print_rows(detail["history"], json=False, title="history", columns=BELIEF_COLUMNS)
    print_rows(
        detail["corrections"],
        json=False,
        title="corrections",
        columns={c: field(c) for c in ("kind", "scope", "replacement", "occurred_at")},
    )


@beliefs_app.command("reject")
def beliefs_reject(
    belief_id: Annotated[uuid.UUID, typer.Argument(help="The belief's id.")],
    principal: Principal,
    kind: Annotated[CorrectionKind, typer.Option(help="What is wrong with it.")],
    replacement: Annotated[
        str | None, typer.Option(help="The new value, for --kind changed.")
    ] = None,
    project: Annotated[
        str | None, typer.Option(help="Where it does not apply (default: where it was learned).")
    ] = None,
    tenant: Tenant = "default",
    wait: Wait = False,
    timeout: Timeout = 60.0,
) -> None:
    """Correct a belief: untrue, changed (with --replacement), not_here, unspecified."""
    _write(
        lambda service: service.correct(
            tenant=tenant,
            principal=principal,
            belief_id=belief_id,
            kind=kind,
            replacement=replacement,
            project=project,
        ),
        wait=wait,
        timeout=timeout,
    )


@beliefs_app.command("delete")
def beliefs_delete(
    belief_id: Annotated[uuid.UUID, typer.Argument(help="The belief's id.")],
    principal: Principal,
    tenant: Tenant = "default",
    wait: Wait = False,
    timeout: Timeout = 60.0,
) -> None:
    """Delete a belief: its words leave every projection; a hash keeps it from forming again."""
    _write(
        lambda service: service.delete(tenant=tenant, principal=principal, belief_id=belief_id),
        wait=wait,
        timeout=timeout,
    )


def _write(
    call: Callable[[Corrections], Awaitable[LogPosition]], *, wait: bool, timeout: float
) -> None:
    """Append through the service, print where it landed, and with ``wait`` block until the
    project's formed watermark has passed it. Errors name the problem and exit non-zero."""
    settings = load_settings()

    async def run() -> LogPosition:
        pool = await create_pool(settings.database, role="engram-cli")
        try:
            service = Corrections(pool, settings.kafka)
            position = await call(service)
            console.print(
                f"appended {position.event_id} to {position.project} "
                f"(partition {position.partition}, offset {position.offset})"
            )
            if wait:
                await service.wait(position, timeout_s=timeout)
                console.print("applied")
            return position
        finally:
            await pool.close()

    try:
        asyncio.run(run())
    except BeliefNotFound as error:
        err.print(f"[red]{error}[/red]; nothing was appended")
        raise typer.Exit(1) from None
    except InvalidCorrection as error:
        err.print(f"[red]not appended:[/red] {error}")
        raise typer.Exit(2) from None
    except FormationTimeout as error:
        err.print(f"[red]{error}[/red]")
        raise typer.Exit(1) from None


@refusals_app.command("list")
def refusals_list(
    principal: Principal,
    tenant: Tenant = "default",
    json: Json = False,
    generation: GenerationOption = None,
) -> None:
    """List refused proposals with their reason, relation, statement and quote."""
    rows = query(
        lambda conn: list_refusals(conn, tenant=tenant, principal=principal),
        generation,
        principal=(tenant, principal),
    )
    print_rows(
        rows,
        json=json,
        title=f"refusals of {tenant}/{principal}",
        columns={column: field(column) for column in ("reason", "relation", "statement", "quote")},
    )
