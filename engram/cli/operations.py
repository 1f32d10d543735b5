"""Operator commands: freshness, the projection's digest, parked episodes and unparking, dead
letters."""

from __future__ import annotations

import asyncio
import getpass
import sys
import uuid
from typing import Annotated

import asyncpg
import orjson
import typer

from engram.cli.failures import refuse
from engram.cli.identifiers import identifier
from engram.cli.output import console, print_rows
from engram.generations.reading import reading
from engram.generations.registry import GenerationError, live_generation
from engram.infra.db import connect, create_pool
from engram.infra.settings import load_settings
from engram.projections.beliefs.digest import projection_digest
from engram.projections.beliefs.integrity import BrokenLinksError
from engram.projections.reads.freshness import freshness as read
from engram.streams.dead_letter_reader import read_dead_letters
from engram.watermarks.backlog import AmbiguousUnpark, list_parked
from engram.watermarks.backlog import unpark as do_unpark

formation_app = typer.Typer(no_args_is_help=True, help="Operate formation: parked episodes.")
dlq_app = typer.Typer(no_args_is_help=True, help="The dead-letter topic of the episodic log.")


async def _live_pool() -> asyncpg.Pool:
    """A pool on the live generation's tables: operators act on live formation."""
    settings = load_settings().database
    conn = await connect(settings)
    try:
        live = await live_generation(conn)
    finally:
        await conn.close()
    return await create_pool(settings, role="engram-cli", schema=live.schema_name)


def freshness(
    project: Annotated[str, typer.Option(callback=identifier, help="The project to report.")],
    tenant: Annotated[str, typer.Option(callback=identifier, help="Its tenant.")] = "default",
    json: Annotated[bool, typer.Option("--json", help="One JSON object.")] = False,
    generation: Annotated[
        str | None, typer.Option(help="This generation (default: the live one).")
    ] = None,
) -> None:
    """How far formation has got: log and formed offsets, lag, parked, policy in force."""

    async def _run() -> dict[str, object]:
        pool = await create_pool(load_settings().database, role="engram-cli")
        try:
            async with reading(pool, generation) as conn:
                return (await read(conn, tenant=tenant, project=project)).model_dump(mode="json")
        finally:
            await pool.close()

    print_rows([asyncio.run(_run())], json=json, title=f"freshness of {tenant}/{project}")


def digest(
    tenant: Annotated[
        str | None, typer.Option(callback=identifier, help="Only this tenant's rows.")
    ] = None,
    generation: Annotated[
        str | None, typer.Option(help="This generation's projection (default: the live one).")
    ] = None,
    json: Annotated[bool, typer.Option("--json", help="One JSON object.")] = False,
) -> None:
    """The projection's content digest: equal digests mean identical projected tables.

    The same digest the determinism tests compare: run it after a replay, a restore or on two
    deployments fed the same log, and compare. A projection with a row citing one it does not
    have (evidence whose belief is gone, say) gets no digest: it exits 2 naming the links."""

    async def _run() -> str:
        pool = await create_pool(load_settings().database, role="engram-cli")
        try:
            async with reading(pool, generation) as conn:
                return await projection_digest(conn, tenant=tenant)
        finally:
            await pool.close()

    try:
        value = asyncio.run(_run())
    except (GenerationError, BrokenLinksError) as error:
        refuse(error)
    if json:
        record = {"tenant": tenant, "generation": generation, "digest": value}
        sys.stdout.write(orjson.dumps(record).decode() + "\n")
    else:
        console.print(value)


@formation_app.command("parked")
def parked(
    project: Annotated[str, typer.Option(callback=identifier, help="The project.")],
    tenant: Annotated[str, typer.Option(callback=identifier, help="Its tenant.")] = "default",
    json: Annotated[bool, typer.Option("--json", help="JSON lines.")] = False,
) -> None:
    """List parked episodes: metadata only (id, offset, attempts, times, failure kind)."""

    async def _run() -> list[dict[str, object]]:
        pool = await _live_pool()
        try:
            return [vars(p) for p in await list_parked(pool, tenant=tenant, project=project)]
        finally:
            await pool.close()

    print_rows(asyncio.run(_run()), json=json, title=f"parked episodes of {tenant}/{project}")


@formation_app.command("unpark")
def unpark(
    episode_id: Annotated[uuid.UUID, typer.Argument(help="The parked episode's id.")],
    project: Annotated[str, typer.Option(callback=identifier, help="The project.")],
    tenant: Annotated[str, typer.Option(callback=identifier, help="Its tenant.")] = "default",
    actor: Annotated[str | None, typer.Option(help="Who, for the audit (default: you).")] = None,
    offset: Annotated[
        int | None,
        typer.Option(
            help="Only the log entry at this offset (when the id is several principals')."
        ),
    ] = None,
) -> None:
    """Make a parked episode formable again; a running worker re-forms it. Audited."""

    who = actor or getpass.getuser()

    async def _run() -> int:
        pool = await _live_pool()
        try:
            return await do_unpark(
                pool,
                tenant=tenant,
                project=project,
                episode_id=episode_id,
                actor=who,
                offset=offset,
            )
        finally:
            await pool.close()

    try:
        count = asyncio.run(_run())
    except AmbiguousUnpark as ambiguous:
        refuse(ambiguous)
    if count == 0:
        at = "" if offset is None else f" at offset {offset}"
        console.print(f"[red]no parked episode {episode_id}{at} in {tenant}/{project}[/red]")
        raise typer.Exit(1)
    console.print(
        f"unparked {episode_id} ({count} log entr{'y' if count == 1 else 'ies'}) as {who}"
    )


@dlq_app.command("list")
def dlq_list(
    json: Annotated[bool, typer.Option("--json", help="JSON lines.")] = False,
    limit: Annotated[int, typer.Option(help="At most this many.")] = 100,
) -> None:
    """Dead letters with their reason and source position (the bytes are not printed)."""

    letters = asyncio.run(read_dead_letters(load_settings().kafka, limit=limit))
    print_rows([vars(letter) for letter in letters], json=json, title="dead letters")
