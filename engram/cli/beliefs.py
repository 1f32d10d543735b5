"""``engram beliefs`` and ``engram refusals``: read what formed and what was refused, and
correct or delete a belief. Writes go through the same service as the API and append to the
episodic log; ``--wait`` returns once the projector has applied them."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Awaitable, Callable
from datetime import datetime
from typing import Annotated, Any

import asyncpg
import typer
from rich.markup import escape

from engram.cli.erasures import print_receipt
from engram.cli.failures import refuse
from engram.cli.identifiers import identifier
from engram.cli.output import (
    BELIEF_COLUMNS,
    PageAsked,
    cell,
    console,
    err,
    field,
    print_listed,
    print_rows,
    query,
    query_one,
    quotes,
)
from engram.formation.wording import relation_words
from engram.infra.db import create_pool
from engram.infra.settings import load_settings
from engram.infra.visible import shown
from engram.projections.reads.pages import BeliefFilter, page_beliefs
from engram.projections.reads.queries import get_belief
from engram.projections.reads.refusals import RefusalFilter, page_refusals, refusal_summary
from engram.schemas.api import LogPosition
from engram.schemas.claims import RefusalReason
from engram.schemas.corrections import CorrectionKind
from engram.sealing.opening import open_sealer
from engram.service.corrections import BeliefNotFound, Corrections, InvalidCorrection
from engram.service.erasures import Erasures
from engram.watermarks.waiting import FormationTimeout

beliefs_app = typer.Typer(no_args_is_help=True, help="Read, correct and delete what has formed.")
refusals_app = typer.Typer(no_args_is_help=True, help="Read what was refused, with its words.")

Tenant = Annotated[str, typer.Option(callback=identifier, help="Tenant of the principal.")]
Principal = Annotated[str, typer.Option(callback=identifier, help="Whose beliefs.")]
Json = Annotated[bool, typer.Option("--json", help="JSON lines.")]
Wait = Annotated[bool, typer.Option(help="Wait until the change is applied.")]
Timeout = Annotated[float, typer.Option(help="Seconds to wait with --wait.")]
GenerationOption = Annotated[
    str | None, typer.Option("--generation", help="Read this generation (default: the live one).")
]


PageLimit = Annotated[int, typer.Option(min=1, max=500, help="Items per page.")]
PageCursor = Annotated[
    str | None, typer.Option(help="The cursor a previous page printed, for the next page.")
]
OnlyProject = Annotated[
    str | None, typer.Option("--project", callback=identifier, help="Only this project.")
]
Since = Annotated[datetime | None, typer.Option("--since", help="Only from this time on.")]


@beliefs_app.command("list")
def beliefs_list(
    principal: Principal,
    tenant: Tenant = "default",
    all_: Annotated[bool, typer.Option("--all", help="Include superseded and retired.")] = False,
    as_of: Annotated[datetime | None, typer.Option(help="What was believed at this time.")] = None,
    project: Annotated[
        str | None, typer.Option(callback=identifier, help="Only what applies in this project.")
    ] = None,
    status: Annotated[str | None, typer.Option(help="Only this status.")] = None,
    belief_type: Annotated[str | None, typer.Option("--type", help="Only this type.")] = None,
    relation: Annotated[str | None, typer.Option(help="Only this relation.")] = None,
    min_confidence: Annotated[
        float | None,
        typer.Option(
            "--min-confidence",
            min=0.0,
            max=1.0,
            help="Only beliefs whose confidence, decayed to now (or --as-of), is at least this.",
        ),
    ] = None,
    limit: PageLimit = 100,
    cursor: PageCursor = None,
    json: Json = False,
    generation: GenerationOption = None,
) -> None:
    """List beliefs with their evidence (current by default), a page at a time."""
    chosen = BeliefFilter(
        include_all=all_,
        as_of=as_of,
        project=project,
        status=status,
        belief_type=belief_type,
        relation=relation,
        min_confidence=min_confidence,
    )
    asked = PageAsked(tenant, principal, limit, cursor, generation, json)
    print_listed(page_beliefs, chosen, asked, what="beliefs", columns=BELIEF_COLUMNS)


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
        f"[bold]{escape(shown(belief['readable']))}[/bold]  "
        f"({belief['status']}, {belief['confidence']})"
    )
    console.print(cell(quotes(belief)))
    run = detail["formed_by"]
    if run is not None:
        console.print(
            f"formed by run {run['run_id']} ({run['trigger']}, policy {run['policy_version']}) "
            f"at {run['occurred_at']} from {run['project']}/{run['session']}, "
            f"log {run['source_topic']}:{run['source_partition']}:{run['source_offset']}"
        )
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
        str | None,
        typer.Option(
            callback=identifier, help="Where it does not apply (default: where it was learned)."
        ),
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
    """Delete a belief: its words leave every projection; a hash keeps it from forming again.
    With --wait, prints the receipt: what went, and where the words still are."""
    _write(
        lambda service: service.delete(tenant=tenant, principal=principal, belief_id=belief_id),
        wait=wait,
        timeout=timeout,
        receipt_of=principal,
    )


def _write(
    call: Callable[[Corrections], Awaitable[LogPosition]],
    *,
    wait: bool,
    timeout: float,
    receipt_of: str | None = None,
) -> None:
    """Append through the service, print where it landed, and with ``wait`` block until the
    project's formed watermark has passed it — and, for an erasure (``receipt_of`` names whom
    it is about), print its receipt. Errors name the problem and exit non-zero."""
    settings = load_settings()

    async def run() -> LogPosition:
        pool = await create_pool(settings.database, role="engram-cli")
        try:
            service = Corrections(
                pool,
                settings.kafka,
                policy_file=settings.formation.policy_file,
                sealer=await open_sealer(settings.keys, pool),
            )
            position = await call(service)
            console.print(
                f"appended {position.event_id} to {position.project} "
                f"(partition {position.partition}, offset {position.offset})"
            )
            if wait:
                await service.wait(position, timeout_s=timeout)
                console.print("applied")
                if receipt_of is not None:
                    await _print_receipt(pool, position, receipt_of)
            elif receipt_of is not None:
                console.print(
                    f"its receipt, once applied: engram erasures show {position.event_id} "
                    f"--tenant {position.tenant} --principal {receipt_of}"
                )
            return position
        finally:
            await pool.close()

    try:
        asyncio.run(run())
    except BeliefNotFound as error:
        err.print(f"[red]{error}[/red]; nothing was appended")
        raise typer.Exit(1) from None
    except InvalidCorrection as error:
        err.print(f"[red]not appended:[/red] {error.naming(lambda name: f'--{name}')}")
        raise typer.Exit(2) from None
    except FormationTimeout as error:
        refuse(error)


RECEIPT_WAIT_S = 10.0
"""The receipt is written in the transaction that passes the watermark: there already."""


async def _print_receipt(pool: asyncpg.Pool, position: LogPosition, principal: str) -> None:
    receipt = await Erasures(pool, load_settings().kafka).receipt(
        event_id=position.event_id,
        tenant=position.tenant,
        principal=principal,
        timeout_s=RECEIPT_WAIT_S,
    )
    if receipt is None:
        err.print(f"[red]no receipt of {position.event_id} was written[/red]")
        raise typer.Exit(1)
    print_receipt(receipt)


REFUSAL_COLUMNS = {
    "reason": field("reason"),
    "relation": lambda r: relation_words(r["relation"]),
    "statement": field("readable"),
    "quote": field("quote"),
}
"""The relation and statement in words (``readable``); ``--json`` keeps the stored ones too."""


@refusals_app.command("list")
def refusals_list(
    principal: Principal,
    tenant: Tenant = "default",
    reason: Annotated[RefusalReason | None, typer.Option(help="Only this reason.")] = None,
    project: OnlyProject = None,
    relation: Annotated[str | None, typer.Option(help="Only this relation.")] = None,
    since: Since = None,
    limit: PageLimit = 100,
    cursor: PageCursor = None,
    json: Json = False,
    generation: GenerationOption = None,
) -> None:
    """List refused proposals with their reason, relation, statement and quote."""
    chosen = RefusalFilter(reason=reason, project=project, relation=relation, since=since)
    asked = PageAsked(tenant, principal, limit, cursor, generation, json)
    print_listed(page_refusals, chosen, asked, what="refusals", columns=REFUSAL_COLUMNS)


@refusals_app.command("summary")
def refusals_summary(
    principal: Principal,
    tenant: Tenant = "default",
    reason: Annotated[RefusalReason | None, typer.Option(help="Only this reason.")] = None,
    project: OnlyProject = None,
    since: Since = None,
    json: Json = False,
    generation: GenerationOption = None,
) -> None:
    """Refusals counted by reason, and unmapped ones by the relation proposed."""
    chosen = RefusalFilter(reason=reason, project=project, since=since)
    summary = query_one(
        lambda conn: refusal_summary(conn, tenant=tenant, principal=principal, chosen=chosen),
        generation,
        principal=(tenant, principal),
    )
    assert summary is not None
    if json:
        print_rows([summary], json=True, title="")
        return
    console.print(f"{summary['total']} refusal(s) of {tenant}/{principal}")
    print_rows(summary["by_reason"], json=False, title="by reason")
    print_rows(summary["by_unmapped_relation"], json=False, title="unmapped relations")
