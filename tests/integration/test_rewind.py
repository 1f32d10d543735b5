"""A late claims batch rewinds only the batches after it, on real PostgreSQL, through the
projector's store: the result equals in-order arrival, the batches before it are not touched,
and what the rewind changes is published as memory events."""

from __future__ import annotations

from collections.abc import Sequence

import asyncpg
import pytest

from engram.projections.beliefs.store import ClaimsRecord, project_records
from engram.schemas.claims import ClaimsBatchFormed
from tests.support.episodes import turn
from tests.support.isolation import Isolated
from tests.support.projecting import batch_of, city_batches, claim

pytestmark = pytest.mark.integration

_BELIEFS = """
SELECT principal, relation, object_text, polarity, status, confidence, corroboration,
       valid_from, valid_to, known_to, scope, origin_scopes, flagged_for_review,
       cardinality(conflicts_with) AS conflicts, superseded_by IS NULL AS open
FROM belief WHERE tenant = $1 ORDER BY principal, relation, object_text, valid_from
"""


async def _project(pool: asyncpg.Pool, batches: Sequence[ClaimsBatchFormed], topic: str) -> None:
    async with pool.acquire() as conn:
        for offset, batch in enumerate(batches):
            record = ClaimsRecord(batch, offset)
            await project_records(conn, [record], topic=topic, partition=0, read_through=offset)


async def _projected(pool: asyncpg.Pool, tenant: str) -> tuple[object, ...]:
    beliefs = [tuple(r) for r in await pool.fetch(_BELIEFS, tenant)]
    counts = [
        await pool.fetchval(f"SELECT count(*) FROM {table} WHERE tenant = $1", tenant)
        for table in ("evidence", "refusal", "consolidation_run", "entity", "claims_history")
    ]
    return beliefs, counts


async def test_a_late_batch_undoes_only_the_batches_after_it_and_ends_as_in_order_arrival(
    isolated: Isolated, pool: asyncpg.Pool
) -> None:
    in_order, late_tenant = f"{isolated.tenant}a", f"{isolated.tenant}b"
    await _project(pool, city_batches(in_order, 30), "in-order")
    batches = city_batches(late_tenant, 30)
    late = batches.pop(13)  # p1's batch at minute 13, held back past p1's later ones
    await _project(pool, batches, "late")
    before = {
        r["run_id"]: (r["ctid"], r["order_key"])
        for r in await pool.fetch(
            "SELECT run_id, ctid::text, order_key FROM claims_history WHERE tenant = $1",
            late_tenant,
        )
    }
    await _project(pool, [late], "late-one")
    after = {
        r["run_id"]: r["ctid"]
        for r in await pool.fetch(
            "SELECT run_id, ctid::text FROM claims_history WHERE tenant = $1", late_tenant
        )
    }
    assert await _projected(pool, late_tenant) == await _projected(pool, in_order)
    late_key = await pool.fetchval(
        "SELECT order_key FROM claims_history WHERE run_id = $1", late.batch_id
    )
    p1 = {b.batch_id for b in batches if b.principal == "p1"}
    untouched = {i for i, (ctid, key) in before.items() if after[i] == ctid}
    rewritten = set(before) - untouched
    assert rewritten and rewritten == {i for i in p1 if before[i][1] > late_key}


async def test_a_suffix_kept_without_undo_records_is_resolved_again_from_nothing(
    isolated: Isolated, pool: asyncpg.Pool
) -> None:
    in_order, late_tenant = f"{isolated.tenant}a", f"{isolated.tenant}b"
    await _project(pool, city_batches(in_order, 24), "in-order")
    batches = city_batches(late_tenant, 24)
    late = batches.pop(4)
    await _project(pool, batches, "late")
    await pool.execute("UPDATE claims_history SET undo = NULL WHERE tenant = $1", late_tenant)
    await _project(pool, [late], "late-one")
    assert await _projected(pool, late_tenant) == await _projected(pool, in_order)
    still_without = await pool.fetchval(
        "SELECT count(*) FROM claims_history WHERE tenant = $1 AND principal = $2 AND undo IS NULL",
        late_tenant,
        late.principal,
    )
    assert still_without == 0  # the principal's batches were kept again, with undo records


async def test_what_a_rewind_changes_is_published_as_memory_events(
    isolated: Isolated, pool: asyncpg.Pool
) -> None:
    """Cork then Oslo; Riga, dated between them, arrives last: Riga supersedes Cork, and Oslo's
    batch, resolved again, now supersedes Riga — an event nobody had been told of."""
    t = isolated.tenant
    cork = batch_of(
        turn(t, "ana", "p", "I live in Cork.", seq=1),
        claim("I", "lives_in", "Cork", "I live in Cork"),
    )
    oslo = batch_of(
        turn(t, "ana", "p", "I live in Oslo.", seq=3),
        claim("I", "lives_in", "Oslo", "I live in Oslo"),
    )
    riga = batch_of(
        turn(t, "ana", "q", "I live in Riga.", seq=2),
        claim("I", "lives_in", "Riga", "I live in Riga"),
    )
    await _project(pool, [cork, oslo, riga], "claims")
    ids = {
        r["object_text"]: r["belief_id"]
        for r in await pool.fetch("SELECT object_text, belief_id FROM belief WHERE tenant = $1", t)
    }
    events = {
        (r["type"], r["run_id"], r["belief_id"])
        for r in await pool.fetch(
            "SELECT payload->>'type' AS type, (payload->>'run_id')::uuid AS run_id, "
            "(payload->>'belief_id')::uuid AS belief_id FROM memory_event_outbox WHERE tenant = $1",
            t,
        )
    }
    assert ("memory.superseded", oslo.batch_id, ids["Riga"]) in events
    assert ("memory.superseded", riga.batch_id, ids["Cork"]) in events
    assert ("memory.formed", riga.batch_id, ids["Riga"]) in events
    # The rewind queued some events again (their ids are stable, so their rows stay) and some
    # new ones: each event is pending once, in the order it was queued.
    queued = "SELECT event_id FROM {} WHERE tenant = $1 ORDER BY sequence"
    outbox = [r["event_id"] for r in await pool.fetch(queued.format("memory_event_outbox"), t)]
    pending = [r["event_id"] for r in await pool.fetch(queued.format("memory_event_pending"), t)]
    assert pending == outbox
