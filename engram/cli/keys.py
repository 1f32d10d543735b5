"""``engram keys``: the key-encryption key's operator commands (docs/privacy.md, "Per-principal
keys"). Keys come from the settings or the environment only, never from argv, where they would
land in shell history and in every process listing."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console

from engram.cli.failures import refuse
from engram.cli.identifiers import identifier
from engram.infra.db import connect
from engram.infra.errors import EngramFailure
from engram.infra.settings import load_settings
from engram.keys.errors import RotationRefused
from engram.keys.kek import keks_from_settings, new_kek_text
from engram.keys.kek_file import create_kek_file
from engram.keys.rotation import RotationProgress, remaining, rotate
from engram.keys.store import ensure_canary, kek_first_seen, principal_named, verify_keks

keys_app = typer.Typer(
    no_args_is_help=True,
    help="Per-principal data keys: make a KEK, check it, rotate it; whom a pseudonym names.",
)
out = Console(stderr=True)


@keys_app.command("new-kek")
def new_kek(
    file: Annotated[
        Path | None,
        typer.Option(
            "--file",
            help="Write it to this file (mode 0600) for ENGRAM_KEYS_KEK_FILE instead of "
            "printing it; an existing file is kept, never replaced.",
        ),
    ] = None,
) -> None:
    """Make a fresh key-encryption key (32 random bytes, base64): printed for ENGRAM_KEYS_KEK,
    or written to --file for ENGRAM_KEYS_KEK_FILE. Back it up apart from the database: losing it
    loses every encrypted word."""
    if file is None:
        print(new_kek_text())
        return
    if create_kek_file(file, new_kek_text()):
        out.print(f"wrote a new key-encryption key to {file} (mode 0600): back it up")
    else:
        out.print(f"{file} exists and is kept (a KEK is never replaced: rotate it instead)")


def kek_age(seen: tuple[datetime, bool] | None) -> str:
    """How old the KEK is, in words: a forget reaches the database backups taken before it
    only once the KEK that wrapped their keys is rotated away and destroyed."""
    if seen is None:
        return "age unknown"
    since, before_recorded = seen
    days = (datetime.now(UTC) - since).days
    when = (
        f"in use since before {since:%Y-%m-%d} (at least {days} days: it was in use before "
        "Engram recorded when a KEK came into use)"
        if before_recorded
        else f"in use since {since:%Y-%m-%d} ({days} days)"
    )
    return (
        f"{when}; "
        "database backups taken while it is in use open forgotten words until it is rotated "
        'away (`engram keys rotate`) and destroyed (docs/privacy.md, "Backups that die with '
        'their keys")'
    )


@keys_app.command("check")
def check() -> None:
    """The start-up check alone: every stored key's KEK is configured and unwraps."""

    async def _go() -> None:
        settings = load_settings()
        current, previous = keks_from_settings(settings.keys)
        keks = {current.key_id: current}
        if previous is not None:
            keks[previous.key_id] = previous
        conn = await connect(settings.database)
        try:
            await verify_keks(conn, keks, configured=", ".join(sorted(keks)))
            await ensure_canary(conn, current)
            left = 0 if previous is None else await remaining(conn, previous)
            seen = await kek_first_seen(conn, current.key_id)
        finally:
            await conn.close()
        out.print(f"key-encryption key {current.key_id}: ok, {kek_age(seen)}")
        if previous is not None:
            out.print(f"previous key-encryption key {previous.key_id}: ok, wraps {left} keys")

    try:
        asyncio.run(_go())
    except EngramFailure as failure:
        refuse(failure, "check failed")


@keys_app.command("rotate")
def rotate_command() -> None:
    """Re-wrap every data key from ENGRAM_KEYS_PREVIOUS_KEK to ENGRAM_KEYS_KEK, in batches of
    ENGRAM_KEYS_ROTATE_BATCH, one transaction each. Resumable: rerun after any interruption.
    Every worker should hold both KEKs while this runs."""

    def report(step: RotationProgress) -> None:
        out.print(f"re-wrapped {step.rewrapped} data keys, {step.remaining} still to re-wrap")

    async def _go() -> RotationProgress:
        settings = load_settings()
        current, previous = keks_from_settings(settings.keys)
        if previous is None:
            raise RotationRefused(
                "ENGRAM_KEYS_PREVIOUS_KEK is not set: set it to the KEK being replaced and "
                "ENGRAM_KEYS_KEK to the new one"
            )
        conn = await connect(settings.database)
        try:
            out.print(f"rotating data keys from {previous.key_id} to {current.key_id}")
            return await rotate(
                conn, previous, current, batch_size=settings.keys.rotate_batch, progress=report
            )
        finally:
            await conn.close()

    try:
        result = asyncio.run(_go())
    except EngramFailure as failure:
        refuse(failure, "not rotated")
    if result.remaining:
        out.print(
            f"[yellow]{result.rewrapped} data keys re-wrapped, but {result.remaining} were made "
            "under the previous KEK meanwhile (a process without the new one): give every "
            "process ENGRAM_KEYS_KEK=<new>, then rerun[/yellow]"
        )
        raise SystemExit(1)
    out.print(
        f"rotation complete: {result.rewrapped} data keys re-wrapped by this run; "
        "ENGRAM_KEYS_PREVIOUS_KEK may now be removed"
    )


@keys_app.command("who")
def who(
    pseudonym: Annotated[
        str,
        typer.Argument(
            callback=identifier,
            help="A pseudonym as the log and engram.memory-events name a principal (psn-...).",
        ),
    ],
    tenant: Annotated[
        str, typer.Option("--tenant", callback=identifier, help="The pseudonym's tenant.")
    ],
) -> None:
    """Print the principal a pseudonym stands for, while their data key lives. With log
    encryption on, the memory-events topic and the log name principals by pseudonym; a consumer
    of the topic that needs the name asks here (webhooks already carry it). A forgotten
    principal's pseudonym names nobody, for anyone: exit 1."""

    async def _go() -> str | None:
        conn = await connect(load_settings().database)
        try:
            return await principal_named(conn, tenant, pseudonym)
        finally:
            await conn.close()

    try:
        principal = asyncio.run(_go())
    except EngramFailure as failure:
        refuse(failure, "lookup failed")
    if principal is None:
        out.print(
            f"{pseudonym} names no principal of {tenant}: forgotten (its key destroyed), "
            "never minted, or another tenant's"
        )
        raise typer.Exit(1)
    print(principal)
