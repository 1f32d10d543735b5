"""``engram beliefs search``: the read API's search from the command line, read straight from
PostgreSQL in the principal's generation, ranked and scoped exactly as ``GET /v1/search``."""

from __future__ import annotations

from typing import Annotated, Any

import typer

from engram.cli.failures import refuse
from engram.cli.identifiers import identifier
from engram.cli.output import err, print_rows, query, quotes
from engram.projections.reads.search import (
    MAX_LIMIT,
    InvalidCursor,
    UnsearchableQuery,
    search_beliefs,
)
from engram.schemas.api import SearchMode, SearchResults

HIT_COLUMNS = {
    "id": lambda h: str(h["belief"]["belief_id"])[:8],
    "score": lambda h: f"{h['score']:.3f}",
    "statement": lambda h: str(h["belief"]["readable"]),
    "confidence": lambda h: str(h["belief"]["confidence"]),
    "evidence": lambda h: quotes(h["belief"]),
}


def beliefs_search(
    q: Annotated[
        str,
        typer.Argument(
            help='What to look for: a question (mode any), or words, "a phrase", or, -word '
            "(mode all)."
        ),
    ],
    principal: Annotated[str, typer.Option(callback=identifier, help="Whose beliefs.")],
    tenant: Annotated[
        str, typer.Option(callback=identifier, help="Tenant of the principal.")
    ] = "default",
    project: Annotated[
        str | None, typer.Option(callback=identifier, help="Only what applies in this project.")
    ] = None,
    mode: Annotated[
        SearchMode,
        typer.Option(
            help="any: any word may match, more matching words first; all: every word must "
            "match (web-search syntax)."
        ),
    ] = SearchMode.ANY,
    limit: Annotated[int, typer.Option(min=1, max=MAX_LIMIT, help="Hits per page.")] = 20,
    cursor: Annotated[str | None, typer.Option(help="The next page, as printed.")] = None,
    json: Annotated[bool, typer.Option("--json", help="JSON lines, one hit each.")] = False,
    generation: Annotated[
        str | None, typer.Option("--generation", help="Read this generation (default: live).")
    ] = None,
) -> None:
    """Search current beliefs, best first, with the words behind each."""
    pages: list[dict[str, Any]] = []

    async def read(conn: Any) -> list[SearchResults]:
        return [
            await search_beliefs(
                conn,
                tenant=tenant,
                principal=principal,
                query=q,
                mode=mode,
                project=project,
                limit=limit,
                cursor=cursor,
            )
        ]

    try:
        pages = query(read, generation, principal=(tenant, principal))
    except (UnsearchableQuery, InvalidCursor) as error:
        refuse(error, "not searched")
    [page] = pages
    print_rows(page["hits"], json=json, title=f"{q!r} in {tenant}/{principal}", columns=HIT_COLUMNS)
    if page["next_cursor"]:
        err.print(f"more: --cursor {page['next_cursor']}")
