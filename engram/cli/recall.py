"""``engram recall``: the read API's recall from the command line, read straight from
PostgreSQL in the principal's generation, ranked and scoped exactly as ``GET /v1/recall``:
beliefs first (with their quotes), then the messages that answer, each labelled with its role."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any

import typer

from engram.cli.failures import refuse
from engram.cli.identifiers import identifier
from engram.cli.output import err, print_rows, query, quotes
from engram.infra.settings import load_settings
from engram.projections.messages.embeddings.wiring import embedder_from_settings
from engram.projections.reads.recall import (
    MAX_LIMIT,
    OWN_WORDS,
    IndexBehind,
    InvalidCursor,
    UnsearchableQuery,
    recall,
    semantic_query,
    wait_indexed,
)
from engram.schemas.api import RecallResults
from engram.schemas.common import Role


def _what(hit: dict[str, Any]) -> str:
    if hit["kind"] == "belief":
        return "belief"
    return "message" if hit["own_words"] else f"message ({hit['role']})"


def _text(hit: dict[str, Any]) -> str:
    if hit["kind"] == "belief":
        return f"{hit['belief']['readable']}\n{quotes(hit['belief'])}"
    return str(hit["content"])


def _where(hit: dict[str, Any]) -> str:
    if hit["kind"] == "belief":
        return f"{str(hit['belief']['belief_id'])[:8]} {hit['belief']['scope']}"
    return (
        f"{hit['project']}/{hit['session']} {hit['occurred_at']}\n"
        f"event {str(hit['event_id'])[:8]}#{hit['message_ordinal']} "
        f"@{hit['partition']}:{hit['offset']}"
    )


HIT_COLUMNS = {
    "what": _what,
    "fused": lambda h: f"{h['fused']:.4f}",
    "says": _text,
    "where": _where,
}


def recall_command(
    q: Annotated[str, typer.Argument(help="A question in plain words.")],
    principal: Annotated[str, typer.Option(callback=identifier, help="Whose memory.")],
    tenant: Annotated[
        str, typer.Option(callback=identifier, help="Tenant of the principal.")
    ] = "default",
    project: Annotated[
        str | None, typer.Option(callback=identifier, help="Only what applies in this project.")
    ] = None,
    role: Annotated[
        list[Role] | None,
        typer.Option(help="Messages of this role (repeatable; default: the principal's own)."),
    ] = None,
    limit: Annotated[int, typer.Option(min=1, max=MAX_LIMIT, help="Hits per page.")] = 20,
    cursor: Annotated[str | None, typer.Option(help="The next page, as printed.")] = None,
    json: Annotated[bool, typer.Option("--json", help="JSON lines, one hit each.")] = False,
    semantic: Annotated[
        bool,
        typer.Option(
            "--semantic/--no-semantic",
            help="Also match by meaning with the active embedding generation (default); "
            "--no-semantic: by words only, without loading the embedding model.",
        ),
    ] = True,
    generation: Annotated[
        str | None, typer.Option("--generation", help="Read this generation (default: live).")
    ] = None,
    asked_at: Annotated[
        datetime | None,
        typer.Option(
            "--asked-at",
            help="When the question is asked (default: now): 'last week' or 'two months ago' "
            "in it is read from this date.",
        ),
    ] = None,
    wait: Annotated[
        float | None,
        typer.Option(
            min=0,
            help="First wait up to this many seconds until --project is formed and indexed to "
            "the end of the log (exit 1 if not).",
        ),
    ] = None,
) -> None:
    """Recall what answers a question: beliefs first, then the messages, best first."""
    if wait is not None and project is None:
        raise typer.BadParameter("--wait needs --project (whose log to wait for)")

    embedder = embedder_from_settings(load_settings().embedding) if semantic else None

    async def read(conn: Any) -> list[RecallResults]:
        if wait is not None and project is not None:
            await wait_indexed(conn, tenant=tenant, project=project, timeout_s=wait)
        semantic = await semantic_query(conn, embedder, q)
        return [
            await recall(
                conn,
                tenant=tenant,
                principal=principal,
                query=q,
                project=project,
                roles=role or OWN_WORDS,
                limit=limit,
                cursor=cursor,
                semantic=semantic,
                asked_at=asked_at,
            )
        ]

    try:
        pages = query(read, generation, principal=(tenant, principal))
    except (UnsearchableQuery, InvalidCursor, IndexBehind) as error:
        refuse(error, "not recalled")
    [page] = pages
    print_rows(
        page["hits"], json=json, title=f"{q!r} for {tenant}/{principal}", columns=HIT_COLUMNS
    )
    for mark in page["reflects"]:
        err.print(
            f"reflects {mark['project']}: formed through {mark['formed_offset']}, "
            f"indexed through {mark['indexed_offset']}"
        )
    if page["next_cursor"]:
        err.print(f"more: --cursor {page['next_cursor']}")
