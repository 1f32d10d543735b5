"""``engram erasures``: the receipt of a deletion or a forgetting, and how the CLI prints one.

``engram beliefs delete --wait`` and ``engram principals forget --wait`` print the receipt when
the erasure applies; ``engram erasures show EVENT_ID`` prints it later (the event id is what the
write printed). The receipt says what went and where, and where the words still are: sealed in
the episodic log, or in clear until its retention — never "nothing remains" while they do.
"""

from __future__ import annotations

import asyncio
import uuid
from typing import Annotated

import typer
from rich.markup import escape

from engram.cli.identifiers import identifier
from engram.cli.output import console, err
from engram.infra.db import create_pool
from engram.infra.settings import load_settings
from engram.schemas.receipts import ErasureReceipt
from engram.service.erasures import Erasures

erasures_app = typer.Typer(
    no_args_is_help=True, help="Receipts of deletions and forgettings: what went, and where."
)


def print_receipt(receipt: ErasureReceipt, *, json: bool = False) -> None:
    """The receipt for people (the headline, the tables, the key, the log, what stays), or as
    one JSON line."""
    if json:
        print(receipt.model_dump_json())
        return
    headline, log, *kept = receipt.says
    console.print(escape(headline))
    for rows in receipt.erased:
        console.print(f"  {rows.rows:>6}  {escape(rows.what)} ({rows.table})")
    if receipt.data_key.destroyed:
        console.print(f"  data key {receipt.data_key.key_id}: destroyed")
    style = "green" if receipt.log.state in ("sealed", "not_in_log") else "yellow"
    console.print(f"[{style}]log ({receipt.log.state}):[/{style}] {escape(log)}")
    for line in kept:
        console.print(f"kept: {escape(line)}")


@erasures_app.command("show")
def show(
    event_id: Annotated[uuid.UUID, typer.Argument(help="The erasure's event id.")],
    principal: Annotated[str, typer.Option(callback=identifier, help="Who it was about.")],
    tenant: Annotated[str, typer.Option(callback=identifier, help="Their tenant.")] = "default",
    timeout: Annotated[float, typer.Option(help="Seconds to wait for it to apply.")] = 0.0,
    json: Annotated[bool, typer.Option("--json", help="One JSON line.")] = False,
) -> None:
    """The receipt of a deletion or forgetting once it has applied."""
    settings = load_settings()

    async def run() -> ErasureReceipt | None:
        pool = await create_pool(settings.database, role="engram-cli")
        try:
            return await Erasures(pool, settings.kafka).receipt(
                event_id=event_id, tenant=tenant, principal=principal, timeout_s=timeout
            )
        finally:
            await pool.close()

    receipt = asyncio.run(run())
    if receipt is None:
        err.print(f"[red]no erasure {event_id} has applied for {tenant}/{principal}[/red]")
        raise typer.Exit(1)
    print_receipt(receipt, json=json)
