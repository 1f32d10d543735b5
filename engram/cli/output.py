"""Printing for the command line: rich tables for people, JSON lines with ``--json``.

A table's cells are plain text, never Rich markup (a stored ``[bold]`` or ``[/]`` is printed as
it is, not interpreted), and every hidden character in them — a right-to-left override, an
escape character — is shown as a marker (:func:`engram.infra.visible.shown`). ``--json`` prints
the stored strings exactly."""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Awaitable, Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import asyncpg
import orjson
import typer
from pydantic import BaseModel
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn
from rich.table import Table
from rich.text import Text

from engram.cli.failures import refuse
from engram.generations.reading import reading
from engram.generations.registry import GenerationError
from engram.infra.db import connect
from engram.infra.settings import load_settings
from engram.infra.visible import shown
from engram.projections.reads.cursor import InvalidCursor

console = Console()
err = Console(stderr=True)

Columns = dict[str, Callable[[dict[str, Any]], str]]


def query(
    read: Callable[[asyncpg.Connection], Awaitable[Sequence[BaseModel]]],
    generation: str | None = None,
    *,
    principal: tuple[str, str] | None = None,
) -> list[dict[str, Any]]:
    """Run one read on a fresh connection, in the live generation (or ``generation``, or the
    one promoted for ``principal``), and return its rows as JSON-ready dicts."""

    async def _run() -> list[dict[str, Any]]:
        conn = await connect(load_settings().database)
        try:
            async with reading(conn, generation, principal=principal) as reader:
                return [view.model_dump(mode="json") for view in await read(reader)]
        finally:
            await conn.close()

    try:
        return asyncio.run(_run())
    except (GenerationError, InvalidCursor) as error:
        refuse(error)


def print_rows(
    rows: list[dict[str, Any]], *, json: bool, title: str, columns: Columns | None = None
) -> None:
    """JSON lines with ``--json``, else a table; without ``columns``, one column per key."""
    if json:
        for row in rows:
            sys.stdout.write(orjson.dumps(row, default=str).decode() + "\n")
        return
    if columns is None:
        columns = {name: field(name) for name in (rows[0] if rows else {"(none)": None})}
    table = Table(title=title)
    for column in columns:
        table.add_column(column)
    for row in rows:
        table.add_row(*(cell(render(row)) for render in columns.values()))
    console.print(table)


def cell(text: str) -> Text:
    """Someone's text as a table cell: shown (hidden characters marked), never markup."""
    return Text(shown(text))


def field(name: str) -> Callable[[dict[str, Any]], str]:
    return lambda row: str(row[name])


def quotes(belief: dict[str, Any]) -> str:
    """Each piece of evidence: the exact words, their byte span, who said them."""
    return "\n".join(
        f"“{e['quote']}” [{e['span_start']}:{e['span_end']}] ({e['role']})"
        for e in belief["evidence"]
    )


BELIEF_COLUMNS: Columns = {
    "id": lambda b: str(b["belief_id"])[:8],
    "statement": field("readable"),
    "status": field("status"),
    "confidence": field("confidence"),
    "now": field("effective_confidence"),
    "evidence": quotes,
}


@contextmanager
def appending(total: int) -> Iterator[Callable[[], None]]:
    """A progress bar on stderr for a long append: yields the call that counts one episode."""
    with Progress(
        TextColumn("appending"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeRemainingColumn(),
        console=err,
        transient=True,
    ) as progress:
        task = progress.add_task("append", total=total)
        yield lambda: progress.advance(task)


def query_one(
    read: Callable[[asyncpg.Connection], Awaitable[BaseModel | None]],
    generation: str | None = None,
    *,
    principal: tuple[str, str] | None = None,
) -> dict[str, Any] | None:
    """Like :func:`query`, for a read that answers one object (a page, a detail) or None."""

    async def one(conn: asyncpg.Connection) -> list[BaseModel]:
        found = await read(conn)
        return [] if found is None else [found]

    rows = query(one, generation, principal=principal)
    return rows[0] if rows else None


def one_of_principal(
    read: Callable[[asyncpg.Connection], Awaitable[BaseModel | None]],
    generation: str | None,
    *,
    tenant: str,
    principal: str,
    missing: str,
) -> dict[str, Any]:
    """What ``read`` finds of the principal's (a run, a session); if nothing, say there is no
    ``missing`` for them and exit 1."""
    found = query_one(read, generation, principal=(tenant, principal))
    if found is None:
        err.print(f"[red]no {missing} for {tenant}/{principal}[/red]")
        raise typer.Exit(1)
    return found


@dataclass(frozen=True)
class PageAsked:
    """What every paged list command is asked besides its filters: whose list, how many from
    which cursor, in which generation, and whether as JSON."""

    tenant: str
    principal: str
    limit: int
    cursor: str | None
    generation: str | None
    json: bool


def print_listed(
    read: Callable[..., Awaitable[BaseModel]],
    chosen: object,
    asked: PageAsked,
    *,
    what: str,
    columns: Columns,
) -> None:
    """One page of a principal's list, printed: ``read`` is the list's paged read (its
    ``page_*``, given ``chosen``, the filters), ``what`` names the list in the title."""
    tenant, principal = asked.tenant, asked.principal
    page = query_one(
        lambda conn: read(
            conn,
            tenant=tenant,
            principal=principal,
            chosen=chosen,
            limit=asked.limit,
            cursor=asked.cursor,
        ),
        asked.generation,
        principal=(tenant, principal),
    )
    assert page is not None
    print_page(page, json=asked.json, title=f"{what} of {tenant}/{principal}", columns=columns)


def print_page(page: dict[str, Any], *, json: bool, title: str, columns: Columns) -> None:
    """A page's items (a table, or JSON lines with ``json``); the cursor of the next page, if
    any, on stderr, so ``--json`` output stays one item per line."""
    print_rows(page["items"], json=json, title=title, columns=columns)
    if page["next_cursor"] is not None:
        sys.stderr.write(f"more: --cursor {page['next_cursor']}\n")  # unwrapped, to copy
