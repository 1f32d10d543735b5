"""The ``engram`` command line: one entry point for producers, workers, operators and readers."""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Awaitable, Callable, Sequence
from datetime import datetime
from pathlib import Path
from typing import Annotated, Any

import asyncpg
import orjson
import typer
import uvicorn
from pydantic import BaseModel
from rich.console import Console
from rich.table import Table

from engram.cli.evaluation.command import eval_app
from engram.cli.extract import extract_lines
from engram.cli.operations import dlq_app, formation_app, freshness
from engram.cli.policy import policy_app
from engram.shared.db import connect, create_pool
from engram.shared.logs import configure_logging
from engram.shared.settings import Settings, load_settings
from engram.shared.waiting import FormationTimeout, wait_for_watermarks
from ingest.jsonl import InvalidEpisodeLine, load_episodes
from ingest.producer import EpisodeProducer
from ingest.topics import ensure_topics
from projections.migrate import MigrationError
from projections.migrate import migrate as run_migrations
from projections.queries import list_beliefs, list_refusals
from projections.runner import project_in_worker, run_projector
from schemas.export import export_json_schemas
from streams.app import build_app, run_worker
from streams.wiring import build_stage

app = typer.Typer(no_args_is_help=True, help="Engram: memory formation for AI agents.")
beliefs_app = typer.Typer(no_args_is_help=True, help="Read what has formed.")
refusals_app = typer.Typer(no_args_is_help=True, help="Read what was refused, with its words.")
schemas_app = typer.Typer(no_args_is_help=True, help="The event contract.")
app.add_typer(beliefs_app, name="beliefs")
app.add_typer(refusals_app, name="refusals")
app.add_typer(schemas_app, name="schemas")

console = Console()
err = Console(stderr=True)


def _settings() -> Settings:
    return load_settings()


@app.callback()
def _root(loglevel: Annotated[str, typer.Option(help="Log level.")] = "warning") -> None:
    configure_logging(loglevel)


@app.command()
def migrate() -> None:
    """Apply pending SQL migrations (idempotent; refuses edited ones)."""

    async def _run() -> list[str]:
        conn = await connect(_settings().database)
        try:
            return [f"{m.version:04d}_{m.name}" for m in await run_migrations(conn)]
        finally:
            await conn.close()

    try:
        applied = asyncio.run(_run())
    except MigrationError as error:
        err.print(f"[red]migration refused:[/red] {error}")
        raise typer.Exit(2) from None
    console.print(
        f"applied {len(applied)} migration(s)" + (f": {', '.join(applied)}" if applied else "")
    )


@app.command()
def topics() -> None:
    """Create Engram's Kafka topics if missing (explicit partitions, log kept forever)."""
    asyncio.run(ensure_topics(_settings().kafka))
    console.print("topics ready")


@app.command()
def ingest(
    path: Annotated[Path, typer.Argument(exists=True, dir_okay=False, help="JSON-lines episodes.")],
    wait: Annotated[bool, typer.Option(help="Wait until every episode has formed.")] = False,
    timeout: Annotated[float, typer.Option(help="Seconds to wait with --wait.")] = 120.0,
) -> None:
    """Publish episodes from a JSON-lines file to the episodic log."""
    try:
        episodes = load_episodes(path)
    except InvalidEpisodeLine as error:
        err.print(f"[red]not ingested:[/red] {error}")
        raise typer.Exit(2) from None
    settings = _settings()

    async def _run() -> None:
        await ensure_topics(settings.kafka)
        async with EpisodeProducer(settings.kafka) as producer:
            appended = await producer.publish_many(episodes)
        console.print(f"appended {len(appended)} episode(s) to {settings.kafka.episodes_topic}")
        if wait:
            positions = [
                (e.tenant, a.project, a.offset) for e, a in zip(episodes, appended, strict=True)
            ]
            await _wait(positions, timeout)
            console.print(f"formed through every appended episode ({len(appended)})")

    async def _wait(positions: list[tuple[str, str, int]], timeout_s: float) -> None:
        pool = await create_pool(settings.database, role="engram-cli")
        try:
            await wait_for_watermarks(pool, positions, timeout_s=timeout_s)
        except FormationTimeout as error:
            err.print(f"[red]{error}[/red]")
            raise typer.Exit(1) from None
        finally:
            await pool.close()

    asyncio.run(_run())


@app.command()
def worker(
    projector: Annotated[bool, typer.Option(help="Also run the belief projector.")] = True,
    loglevel: Annotated[str, typer.Option(help="Worker log level.")] = "warning",
) -> None:
    """Run the formation agent (faust) and the belief projector until interrupted."""
    settings = _settings()
    configure_logging(loglevel)
    asyncio.run(ensure_topics(settings.kafka))
    streams = build_app(settings, build_stage(settings))
    if projector:

        async def project() -> None:
            await project_in_worker(settings)

        streams.app.task(project)
    run_worker(streams, loglevel=loglevel)


@app.command()
def projector() -> None:
    """Run only the belief projector (claims into PostgreSQL) until interrupted.

    Pair it with `engram worker --no-projector` to give formation and projection a process each.
    It serves /health, /ready and /metrics like the worker (ENGRAM_WORKER_HTTP_*).
    """
    settings = _settings()
    asyncio.run(ensure_topics(settings.kafka))
    asyncio.run(run_projector(settings))


def _query(
    read: Callable[[asyncpg.Connection], Awaitable[Sequence[BaseModel]]],
) -> list[dict[str, Any]]:
    """Run one read on a fresh connection and return its rows as JSON-ready dicts."""

    async def _run() -> list[dict[str, Any]]:
        conn = await connect(_settings().database)
        try:
            return [view.model_dump(mode="json") for view in await read(conn)]
        finally:
            await conn.close()

    return asyncio.run(_run())


def _print_rows(
    rows: list[dict[str, Any]],
    *,
    json: bool,
    title: str,
    columns: dict[str, Callable[[dict[str, Any]], str]],
) -> None:
    if json:
        for row in rows:
            sys.stdout.write(orjson.dumps(row).decode() + "\n")
        return
    table = Table(title=title)
    for column in columns:
        table.add_column(column)
    for row in rows:
        table.add_row(*(render(row) for render in columns.values()))
    console.print(table)


def _field(name: str) -> Callable[[dict[str, Any]], str]:
    return lambda row: str(row[name])


def _quotes(belief: dict[str, Any]) -> str:
    return "\n".join(
        f"“{e['quote']}” [{e['span_start']}:{e['span_end']}] ({e['role']})"
        for e in belief["evidence"]
    )


@beliefs_app.command("list")
def beliefs_list(
    principal: Annotated[str, typer.Option(help="Whose beliefs.")],
    tenant: Annotated[str, typer.Option(help="Tenant of the principal.")] = "default",
    all_: Annotated[bool, typer.Option("--all", help="Include superseded and retired.")] = False,
    as_of: Annotated[datetime | None, typer.Option(help="What was believed at this time.")] = None,
    json: Annotated[bool, typer.Option("--json", help="JSON lines.")] = False,
) -> None:
    """List beliefs with their evidence (current by default)."""
    rows = _query(
        lambda conn: list_beliefs(
            conn, tenant=tenant, principal=principal, include_all=all_, as_of=as_of
        )
    )
    _print_rows(
        rows,
        json=json,
        title=f"beliefs of {tenant}/{principal}",
        columns={
            "statement": lambda b: str(b["statement"]),
            "status": lambda b: str(b["status"]),
            "confidence": lambda b: str(b["confidence"]),
            "evidence": _quotes,
        },
    )


@refusals_app.command("list")
def refusals_list(
    principal: Annotated[str, typer.Option(help="Whose refusals.")],
    tenant: Annotated[str, typer.Option(help="Tenant of the principal.")] = "default",
    json: Annotated[bool, typer.Option("--json", help="JSON lines.")] = False,
) -> None:
    """List refused proposals with their reason, relation, statement and quote."""
    rows = _query(lambda conn: list_refusals(conn, tenant=tenant, principal=principal))
    _print_rows(
        rows,
        json=json,
        title=f"refusals of {tenant}/{principal}",
        columns={column: _field(column) for column in ("reason", "relation", "statement", "quote")},
    )


@app.command()
def api(
    host: Annotated[str | None, typer.Option(help="Bind address (default loopback).")] = None,
    port: Annotated[int | None, typer.Option(help="Port.")] = None,
) -> None:
    """Serve the read API (FastAPI)."""
    # Lazy: FastAPI costs ~0.5 s at import, which only this command should pay.
    from projections.api import create_api

    settings = _settings()
    uvicorn.run(
        create_api(settings),
        host=host or settings.api.host,
        port=port or settings.api.port,
        log_level="warning",
    )


@app.command()
def extract() -> None:
    """Read turns as JSON lines on stdin; print candidates and refusals as JSON lines.

    The pure formation core from the command line: no services needed.
    """
    code = extract_lines(sys.stdin.buffer, sys.stdout, sys.stderr)
    raise typer.Exit(code)


@schemas_app.command("export")
def schemas_export(
    check: Annotated[bool, typer.Option(help="Fail if the files on disk are out of date.")] = False,
) -> None:
    """Write the JSON Schema of every episode event to schemas/json/."""
    stale = export_json_schemas(check=check)
    if check and stale:
        err.print(f"[red]out of date:[/red] {', '.join(stale)}; run `engram schemas export`")
        raise typer.Exit(1)
    console.print("schemas up to date" if check else "schemas written")


app.command()(freshness)
app.add_typer(formation_app, name="formation")
app.add_typer(dlq_app, name="dlq")
app.add_typer(policy_app, name="policy")
app.add_typer(eval_app, name="eval", help="Evaluate formation against a labeled corpus.")


def main() -> None:
    app()
