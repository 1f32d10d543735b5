"""``engram principals forget``: forget a person, through the same service as the API."""

from __future__ import annotations

from typing import Annotated

import typer

from engram.cli.beliefs import Timeout, Wait, _write
from engram.cli.identifiers import identifier
from engram.cli.output import err

principals_app = typer.Typer(no_args_is_help=True, help="Whole principals: forget a person.")


@principals_app.command("forget")
def forget(
    tenant: Annotated[str, typer.Option(callback=identifier, help="The principal's tenant.")],
    principal: Annotated[str, typer.Option(callback=identifier, help="Who to forget.")],
    confirm: Annotated[bool, typer.Option(help="Required: this cannot be undone.")] = False,
    wait: Wait = False,
    timeout: Timeout = 60.0,
) -> None:
    """Delete every projected row of the principal and destroy their data key; nothing of theirs
    forms again. With --wait, prints the receipt: what went, and where their words still are —
    sealed in the episodic log (unreadable once the key is gone) or, where the log was not
    encrypted, in clear until its retention (docs/privacy.md)."""
    if not confirm:
        err.print(f"[red]forgetting {tenant}/{principal} cannot be undone; add --confirm[/red]")
        raise typer.Exit(2)
    _write(
        lambda service: service.forget(tenant=tenant, principal=principal),
        wait=wait,
        timeout=timeout,
        receipt_of=principal,
    )
