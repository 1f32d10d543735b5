"""``engram embeddings list | activate | drop``: the embedding generations recall can read.

The embedding follower (``engram worker``, ``engram embedder``) builds the generation its
settings name by replaying the log and activates it when none is active; switching models is
configuring the new one, letting it build, then ``activate`` (one transaction: recall reads the
new vectors from the next question on, never a mix). ``drop`` deletes a generation that is not
active, with its vectors.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import asdict
from typing import Annotated, Any, TypeVar

import asyncpg
import typer

from engram.cli.failures import refuse
from engram.cli.output import err, print_rows
from engram.infra.db import create_pool
from engram.infra.settings import load_settings
from engram.projections.messages.embeddings import store
from engram.projections.messages.embeddings.store import EmbeddingGenerationError

embeddings_app = typer.Typer(
    no_args_is_help=True, help="Embedding generations: list, activate, drop."
)
T = TypeVar("T")


def _with_conn(work: Callable[[asyncpg.Connection], Awaitable[T]]) -> T:
    """Run ``work`` on a fresh connection; a refusal exits with its reason."""

    async def _run() -> T:
        pool = await create_pool(load_settings().database, role="engram-cli")
        try:
            async with pool.acquire() as conn:
                return await work(conn)
        finally:
            await pool.close()

    try:
        return asyncio.run(_run())
    except EmbeddingGenerationError as error:
        refuse(error, "refused")


@embeddings_app.command("list")
def list_command(
    json: Annotated[bool, typer.Option("--json", help="JSON lines.")] = False,
) -> None:
    """Every embedding generation: model, size, recipe, status (building, built, active)."""
    rows: list[dict[str, Any]] = [asdict(row) for row in _with_conn(store.list_generations)]
    print_rows(rows, json=json, title="embedding generations")


@embeddings_app.command("activate")
def activate_command(name: Annotated[str, typer.Argument(help="model/size/recipe")]) -> None:
    """Make a built generation the one recall reads (the previous one goes back to built)."""

    async def work(conn: asyncpg.Connection) -> store.GenerationRow:
        return await store.activate(conn, name)

    row = _with_conn(work)
    err.print(f"active: {row.name}")


@embeddings_app.command("drop")
def drop_command(name: Annotated[str, typer.Argument(help="model/size/recipe")]) -> None:
    """Delete a generation that is not active, with its vectors."""

    async def work(conn: asyncpg.Connection) -> None:
        await store.drop(conn, name)

    _with_conn(work)
    err.print(f"dropped: {name}")
