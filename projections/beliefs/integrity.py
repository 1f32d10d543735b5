"""The links between projected rows, checked as sets instead of by foreign keys.

A projected row cites others: evidence its belief and run, a refusal its run, a belief its run,
entities and the beliefs it supersedes. The live schema used to keep the per-row provenance links
(evidence, refusals) with foreign keys, which PostgreSQL checks with one query per inserted row —
more than half of what inserting evidence cost (migration 0017). A generation's schema never had
any (``LIKE`` does not copy them). Only the projector writes these tables, from one resolution in
one transaction, so the links are whole by construction; this module is how that is checked: one
anti-join per link, over the whole projection or one tenant. :func:`engram.projections.beliefs.digest.
projection_digest` refuses a projection with a broken link, so every test that compares digests
(exactly-once, kills, rewinds, replays, generations) checks the links as well.
"""

from __future__ import annotations

from dataclasses import dataclass

import asyncpg

from engram.infra.errors import EngramFailure


@dataclass(frozen=True, slots=True)
class Link:
    table: str
    column: str
    target: str
    key: str

    def __str__(self) -> str:
        return f"{self.table}.{self.column} → {self.target}.{self.key}"


LINKS: tuple[Link, ...] = (
    Link("evidence", "belief_id", "belief", "belief_id"),
    Link("evidence", "run_id", "consolidation_run", "run_id"),
    Link("refusal", "run_id", "consolidation_run", "run_id"),
    Link("belief", "formation_run", "consolidation_run", "run_id"),
    Link("belief", "subject_entity_id", "entity", "entity_id"),
    Link("belief", "object_entity_id", "entity", "entity_id"),
    Link("belief", "supersedes", "belief", "belief_id"),
    Link("belief", "superseded_by", "belief", "belief_id"),
    Link("belief_rejection", "run_id", "consolidation_run", "run_id"),
)
"""Every link between projected tables (a NULL link names nothing and is not broken). The
vocabulary's (``belief.relation``) stays a foreign key: ``relation`` is shared, not projected."""


@dataclass(frozen=True, slots=True)
class BrokenLink:
    link: Link
    rows: int

    def __str__(self) -> str:
        return f"{self.rows} row(s) of {self.link.table} name a missing {self.link}"


class BrokenLinksError(EngramFailure, RuntimeError):
    """The projection has rows that cite rows it does not have: a projector bug, or a restore
    that brought some tables and not others. Re-derive the projection (docs/rederivation.md)."""

    code = "broken_links"

    def __init__(self, broken: list[BrokenLink]):
        self.broken = broken
        super().__init__(
            "the projection's links are broken: "
            + "; ".join(str(b) for b in broken)
            + " — re-derive it from the log (docs/rederivation.md)"
        )


async def broken_links(
    conn: asyncpg.Connection | asyncpg.Pool, *, tenant: str | None = None
) -> list[BrokenLink]:
    """The links with rows naming a row that is not there, and how many, in :data:`LINKS`
    order; empty when the projection (or ``tenant``'s part of it) is whole."""
    broken = []
    for link in LINKS:
        rows: int = await conn.fetchval(
            f"""
            SELECT count(*) FROM {link.table} t
            WHERE t.{link.column} IS NOT NULL AND ($1::text IS NULL OR t.tenant = $1)
              AND NOT EXISTS (SELECT 1 FROM {link.target} x WHERE x.{link.key} = t.{link.column})
            """,
            tenant,
        )
        if rows:
            broken.append(BrokenLink(link, rows))
    return broken


async def check_links(
    conn: asyncpg.Connection | asyncpg.Pool, *, tenant: str | None = None
) -> None:
    """Raise :class:`BrokenLinksError` unless every link of the projection is whole."""
    broken = await broken_links(conn, tenant=tenant)
    if broken:
        raise BrokenLinksError(broken)
