"""The projection's links are checked as sets (the per-row foreign keys of evidence and refusals
are gone, migration 0017): a whole projection passes, a row citing a missing one is named, by
link and tenant, and gets no digest. Real PostgreSQL, through the projector's store."""

from __future__ import annotations

import asyncpg
import pytest

from engram.projections.beliefs.digest import PROJECTED_TABLES, projection_digest
from engram.projections.beliefs.integrity import LINKS, BrokenLinksError, broken_links
from engram.projections.beliefs.store import ClaimsRecord, project_records
from tests.support.episodes import turn
from tests.support.isolation import Isolated
from tests.support.projecting import batch_of, claim

pytestmark = pytest.mark.integration


async def _project_ana(pool: asyncpg.Pool, tenant: str) -> None:
    batches = [
        batch_of(
            turn(tenant, "ana", "p", "I live in Cork.", seq=1),
            claim("I", "lives_in", "Cork", "I live in Cork"),
        ),
        batch_of(
            turn(tenant, "ana", "p", "I live in Oslo.", seq=2),
            claim("I", "lives_in", "Oslo", "I live in Oslo"),
        ),
    ]
    async with pool.acquire() as conn:
        for offset, batch in enumerate(batches):
            await project_records(
                conn,
                [ClaimsRecord(batch, offset)],
                topic="claims",
                partition=0,
                read_through=offset,
            )


async def test_a_projected_chunk_has_whole_links(isolated: Isolated, pool: asyncpg.Pool) -> None:
    await _project_ana(pool, isolated.tenant)
    assert await pool.fetchval(
        "SELECT count(*) FROM evidence WHERE tenant = $1", isolated.tenant
    ), "something to check"
    assert await pool.fetchval(
        "SELECT count(*) FROM belief WHERE tenant = $1 AND supersedes IS NOT NULL", isolated.tenant
    ), "Oslo supersedes Cork: a belief-to-belief link too"
    assert await broken_links(pool, tenant=isolated.tenant) == []


async def test_evidence_whose_belief_is_gone_is_named_and_gets_no_digest(
    isolated: Isolated, pool: asyncpg.Pool
) -> None:
    t = isolated.tenant
    await _project_ana(pool, t)
    cork = await pool.fetchval(
        "SELECT belief_id FROM belief WHERE tenant = $1 AND object_text = 'Cork'", t
    )
    evidence = await pool.fetchval("SELECT count(*) FROM evidence WHERE belief_id = $1", cork)
    async with pool.acquire() as conn, conn.transaction():
        # What a bug or a partial restore would leave: Cork's row gone, its evidence not (Oslo's
        # pointer to it is a deferred foreign key still, so it is unlinked first).
        await conn.execute("UPDATE belief SET supersedes = NULL WHERE supersedes = $1", cork)
        await conn.execute("DELETE FROM belief WHERE belief_id = $1", cork)

    broken = await broken_links(pool, tenant=t)
    assert [(str(b.link), b.rows) for b in broken] == [
        ("evidence.belief_id → belief.belief_id", evidence)
    ]
    assert await broken_links(pool, tenant=t + "-other") == [], "scoped by tenant"
    with pytest.raises(BrokenLinksError, match=r"evidence\.belief_id → belief\.belief_id"):
        await projection_digest(pool, tenant=t)


def test_every_link_is_between_projected_tables() -> None:
    projected = {table for table, _ in PROJECTED_TABLES}
    assert {link.table for link in LINKS} <= projected
    assert {link.target for link in LINKS} <= projected
