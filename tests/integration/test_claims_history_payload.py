"""What ``claims_history`` keeps of a batch, on real PostgreSQL through the projector's store:
the bytes the record was decoded from when the projector has them, otherwise the batch
serialised; either way a reader decodes the very batch that was applied. (That a deletion's
words leave ``claims_history`` too is held by ``test_corrections``, through the projector.)"""

from __future__ import annotations

import asyncpg
import orjson
import pytest

from engram.projections.beliefs.claims_history import keep_batches
from engram.projections.beliefs.store import ClaimsRecord, project_records
from engram.resolution.undo import BatchUndo
from engram.schemas.claims import decode_claims_batch
from tests.support.isolation import Isolated
from tests.support.projecting import city_batches

pytestmark = pytest.mark.integration


async def test_a_batch_is_kept_as_its_wire_bytes_or_else_serialised(
    isolated: Isolated, pool: asyncpg.Pool
) -> None:
    batches = city_batches(isolated.tenant, 6)
    # Indented: unlike what serialising the batch again gives, so the test tells them apart.
    wire = [orjson.dumps(b.model_dump(mode="json"), option=orjson.OPT_INDENT_2) for b in batches]
    assert all(w != b.model_dump_json().encode() for w, b in zip(wire, batches, strict=True))
    records = [
        ClaimsRecord(b, offset, w if offset % 2 == 0 else None)
        for offset, (b, w) in enumerate(zip(batches, wire, strict=True))
    ]
    async with pool.acquire() as conn:
        await project_records(conn, records, topic="kept", partition=0, read_through=5)
    kept = {
        r["run_id"]: bytes(r["payload"])
        for r in await pool.fetch(
            "SELECT run_id, payload FROM claims_history WHERE tenant = $1", isolated.tenant
        )
    }
    assert len(kept) == len(batches)
    for offset, batch in enumerate(batches):
        payload = kept[batch.batch_id]
        expected = wire[offset] if offset % 2 == 0 else batch.model_dump_json().encode()
        assert payload == expected
        assert decode_claims_batch(payload) == batch


async def test_a_batch_kept_already_stays_as_it_is_beside_the_ones_kept_now(
    isolated: Isolated, pool: asyncpg.Pool
) -> None:
    """Kept batches are copied in; a run kept already (its copy is undone and the rows go in
    with ``ON CONFLICT DO NOTHING``) keeps its row, and the others of the call are kept."""
    first, second, third = city_batches(isolated.tenant, 3)
    async with pool.acquire() as conn, conn.transaction():
        await keep_batches(conn, [(first, BatchUndo(), b"first, as kept")])
        await keep_batches(
            conn,
            [(first, BatchUndo(), b"first, again"), (second, BatchUndo(), None)],
        )
        await keep_batches(conn, [(third, BatchUndo(), b"third")])  # the transaction goes on
    kept = {
        r["run_id"]: bytes(r["payload"])
        for r in await pool.fetch(
            "SELECT run_id, payload FROM claims_history WHERE tenant = $1", isolated.tenant
        )
    }
    assert kept == {
        first.batch_id: b"first, as kept",
        second.batch_id: second.model_dump_json().encode(),
        third.batch_id: b"third",
    }
