"""``engram generations list | diff | promote | drop``: compare and switch projections.

A generation is a policy version with a projection of its own (a PostgreSQL schema) and
consumer groups and topics of its own; ``engram rederive`` builds one. ``diff`` compares two by
content, ``promote`` makes one live for every reader in one transaction, ``drop`` removes a
generation that is not live.
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Awaitable, Callable
from typing import Annotated, TypeVar

import asyncpg
import orjson
import typer
from rich.table import Table

from engram.cli.failures import refuse
from engram.cli.identifiers import identifier
from engram.cli.output import cell, console, err
from engram.generations import registry
from engram.generations.diff import GenerationDiff, diff_generations, load_side
from engram.generations.registry import Generation, GenerationError
from engram.generations.runtime import generation_kafka, generation_lag
from engram.infra.db import create_pool
from engram.infra.settings import load_settings

generations_app = typer.Typer(
    no_args_is_help=True, help="Generations: projections under a policy; diff, promote, drop."
)
Json = Annotated[bool, typer.Option("--json", help="JSON.")]
T = TypeVar("T")


def _with_pool(work: Callable[[asyncpg.Pool], Awaitable[T]]) -> T:
    """Run ``work`` on a fresh pool; a registry refusal exits 2 with its reason."""

    async def _run() -> T:
        pool = await create_pool(load_settings().database, role="engram-cli")
        try:
            return await work(pool)
        finally:
            await pool.close()

    try:
        return asyncio.run(_run())
    except GenerationError as error:
        refuse(error, "refused")


async def _lag(pool: asyncpg.Pool, generation: Generation) -> int | None:
    if generation.status == "dropped":
        return None
    kafka = generation_kafka(load_settings().kafka, generation)
    return (await generation_lag(kafka, pool, generation.schema_name)).total


@generations_app.command("list")
def list_(json: Json = False) -> None:
    """Every generation: id, policy version, principals, status, lag behind the log."""

    async def read(pool: asyncpg.Pool) -> list[dict[str, object]]:
        return [
            {
                "generation": g.generation_id,
                "policy_version": g.policy_version,
                "principals": list(g.principals),
                "status": g.status,
                "lag": await _lag(pool, g),
                "created_at": g.created_at.isoformat(),
            }
            for g in await registry.list_generations(pool)
        ]

    rows = _with_pool(read)
    if json:
        sys.stdout.write(orjson.dumps(rows).decode() + "\n")
        return
    table = Table(title="generations")
    for column in ("generation", "policy_version", "principals", "status", "lag", "created_at"):
        table.add_column(column)
    for row in rows:
        shown = {**row, "principals": ", ".join(map(str, row["principals"])) or "all"}  # type: ignore[call-overload]
        table.add_row(*(str(value) for value in shown.values()))
    console.print(table)


@generations_app.command("diff")
def diff(
    a: Annotated[str, typer.Argument(help="The generation compared from (e.g. the live one).")],
    b: Annotated[str, typer.Argument(help="The generation compared to.")],
    principal: Annotated[
        str | None, typer.Option(callback=identifier, help="Only this principal.")
    ] = None,
    tenant: Annotated[
        str | None, typer.Option(callback=identifier, help="Only this tenant.")
    ] = None,
    json: Json = False,
) -> None:
    """Beliefs added, removed and changed (status, confidence) by content; refusals by reason;
    belief totals per principal."""

    async def compare(pool: asyncpg.Pool) -> GenerationDiff:
        sides = []
        for gid in (a, b):
            generation = await registry.find_generation(pool, gid)
            if generation.status == "dropped":
                raise GenerationError(f"generation {gid} was dropped")
            sides.append(
                await load_side(pool, generation.schema_name, principal=principal, tenant=tenant)
            )
        return diff_generations(sides[0], sides[1])

    found = _with_pool(compare)
    if json:
        body = {"a": a, "b": b, **found.as_json()}
        sys.stdout.write(orjson.dumps(body).decode() + "\n")
        return
    _print_diff(a, b, found)


def _print_diff(a: str, b: str, found: GenerationDiff) -> None:
    beliefs = Table(title=f"beliefs {a} → {b}")
    for column in ("", "principal", "relation", "statement", "status", "confidence"):
        beliefs.add_column(column)
    for sign, rows in (("+", found.added), ("-", found.removed)):
        for r in rows:
            beliefs.add_row(
                sign, r.principal, r.relation, cell(r.statement), r.status, str(r.confidence)
            )
    for c in found.changed:
        beliefs.add_row(
            "~",
            c.after.principal,
            c.after.relation,
            cell(c.after.statement),
            f"{c.before.status} → {c.after.status}",
            f"{c.before.confidence} → {c.after.confidence}",
        )
    console.print(beliefs)
    totals = Table(title="totals")
    for column in ("", a, b):
        totals.add_column(column)
    for reason, (x, y) in found.refusals.items():
        totals.add_row(f"refused: {reason}", str(x), str(y))
    for who, (x, y) in found.principals.items():
        totals.add_row(f"beliefs: {who}", str(x), str(y))
    console.print(totals)
    console.print(
        f"{len(found.added)} added, {len(found.removed)} removed, {len(found.changed)} changed"
    )


@generations_app.command("promote")
def promote(
    generation: Annotated[str, typer.Argument(help="The generation to make live.")],
    confirm: Annotated[bool, typer.Option(help="Required: promote for every reader.")] = False,
    force: Annotated[bool, typer.Option(help="Promote even while it lags the log.")] = False,
) -> None:
    """Make a generation live, atomically for readers; refused while it lags the log head."""
    if not confirm:
        err.print("[red]refused:[/red] promoting switches every reader; add --confirm")
        raise typer.Exit(2)

    async def flip(pool: asyncpg.Pool) -> Generation:
        target = await registry.find_generation(pool, generation)
        lag = await _lag(pool, target)
        if lag and not force:
            raise GenerationError(
                f"generation {generation} lags the log by {lag} record(s); wait for "
                "`engram rederive` to catch up, or add --force"
            )
        async with pool.acquire() as conn:
            return await registry.promote(conn, generation)

    promoted = _with_pool(flip)
    console.print(
        f"generation {promoted.generation_id} is live (policy {promoted.policy_version}); "
        "restart `engram worker` processes so live formation follows it"
    )


@generations_app.command("drop")
def drop(generation: Annotated[str, typer.Argument(help="A generation that is not live.")]) -> None:
    """Drop a generation's projection (its schema); its row stays, marked dropped."""

    async def remove(pool: asyncpg.Pool) -> Generation:
        async with pool.acquire() as conn:
            return await registry.drop(conn, generation)

    dropped = _with_pool(remove)
    console.print(f"generation {dropped.generation_id} dropped")
