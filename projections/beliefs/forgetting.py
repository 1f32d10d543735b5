"""Removing words: a deleted belief's from every projection, a forgotten principal's rows.

Deletion is not rejection. A rejected belief keeps its words for audit; a deleted one leaves only
its content hash (the tombstone, written by the store) — its belief rows (current and past values
of the same content), their evidence, the refusals that quote the same words, the entities
nothing else names, and the words of any correction of that content all go. Forgetting a person
deletes every projected row that names them; a tombstone of their hash stays.

The index of messages (:mod:`engram.projections.messages.store`) loses every message a deleted belief
quoted — by its evidence, by the refusals scrubbed with it, and by any indexed message of the
principal holding one of its quotes — and each is named in ``message_hidden`` (ids, no words) so
the indexer, should it reach the message later, leaves it out; the messages' vectors and the
deleted beliefs' go from every embedding generation (the embedding follower leaves a hidden
message out the same way). Forgetting removes every vector of the principal in the transaction
that destroys their data key. Both run after a
chunk's other writes, in its transaction: what resolution wrote earlier in the chunk goes too.

What each removed, and where the words still are (the episodic log and the claims topic in
Kafka, sealed or in clear), is the erasure's receipt (:mod:`engram.projections.beliefs.receipts`) and
docs/privacy.md.
"""

from __future__ import annotations

import asyncpg

from engram.keys.store import destroy_data_key
from engram.notifications import drop_principal_deliveries
from engram.projections.beliefs.claims_history import RESOLVED_BY_PRINCIPAL
from engram.projections.messages import MessageKey, embedding_store, hide_messages
from engram.resolution.beliefs import TombstoneRow
from engram.schemas.common import principal_hash

_PROJECTED_BY_PRINCIPAL = (
    *RESOLVED_BY_PRINCIPAL,
    "memory_event_pending",
    "memory_event_outbox",
    "claims_history",
    "message",
    "message_hidden",
    "message_term",
    "message_term_stats",
    "message_scope_stats",
)
"""Every table with a tenant and principal column, children before the rows they reference."""

SHARED_BY_PRINCIPAL = (
    "public.model_receipt",
    "public.model_attempt",
    "public.session_message",
    "public.ui_session",
    "public.api_token",
)
"""Shared by every generation: the model's answers about the principal's messages, the audit of
its calls, the session messages kept as its context, the inspector's sessions showing the
principal (an operator's too), and the principal's API tokens (a forgotten person's token names
them and must stop working)."""

FORGOTTEN_ROWS = (*_PROJECTED_BY_PRINCIPAL, *SHARED_BY_PRINCIPAL, "public.embedding_vector")
"""Every table a forgetting empties of the principal: what its receipt counts."""


async def delete_content(conn: asyncpg.Connection, tombstone: TombstoneRow) -> None:
    key = (tombstone.tenant, tombstone.principal, tombstone.content_hash)
    gone = await conn.fetch(
        "SELECT belief_id, statement, object_text, subject_entity_id, object_entity_id "
        "FROM belief WHERE tenant = $1 AND principal = $2 AND content_hash = $3",
        *key,
    )
    ids = [row["belief_id"] for row in gone]
    evidence = await conn.fetch(
        "SELECT quote, episode_id, message_ordinal FROM evidence WHERE belief_id = ANY($1::uuid[])",
        ids,
    )
    quotes = sorted({row["quote"] for row in evidence})
    await _unlink(conn, ids)
    await conn.execute("DELETE FROM evidence WHERE belief_id = ANY($1::uuid[])", ids)
    await conn.execute("DELETE FROM belief WHERE belief_id = ANY($1::uuid[])", ids)
    refused = await _scrub_refusals(conn, tombstone, [row["statement"] for row in gone], quotes)
    quoted = [
        MessageKey(tombstone.tenant, tombstone.principal, row["episode_id"], row["message_ordinal"])
        for row in (*evidence, *refused)
    ]
    await hide_messages(conn, quoted, quotes=quotes)  # and their vectors
    await embedding_store.delete_items(
        conn, tombstone.tenant, tombstone.principal, "belief", [str(i) for i in ids]
    )
    await _drop_orphan_entities(conn, gone)
    await conn.execute(
        "UPDATE belief_rejection SET subject_key = NULL, object_key = NULL, facet = NULL, "
        "statement = NULL, replacement = NULL "
        "WHERE tenant = $1 AND principal = $2 AND (content_hash = $3 OR replacement = ANY($4))",
        *key,
        [row["object_text"] for row in gone],
    )


async def _unlink(conn: asyncpg.Connection, ids: list[object]) -> None:
    """Other beliefs that point at the deleted ones keep their own words, not the pointers."""
    await conn.execute(
        "UPDATE belief SET supersedes = NULL WHERE supersedes = ANY($1::uuid[])", ids
    )
    await conn.execute(
        "UPDATE belief SET superseded_by = NULL WHERE superseded_by = ANY($1::uuid[])", ids
    )
    await conn.execute(
        "UPDATE belief SET conflicts_with = ARRAY(SELECT c FROM unnest(conflicts_with) c "
        "WHERE c <> ALL($1::uuid[])) WHERE conflicts_with && $1::uuid[]",
        ids,
    )


async def _scrub_refusals(
    conn: asyncpg.Connection, tombstone: TombstoneRow, statements: list[str], quotes: list[str]
) -> list[asyncpg.Record]:
    """Refusals of the principal that state the deleted statement or quote the same words;
    the messages they quoted (episode and ordinal)."""
    rows: list[asyncpg.Record] = await conn.fetch(
        """
        DELETE FROM refusal r WHERE r.tenant = $1 AND r.principal = $2 AND r.quote <> ''
          AND (r.statement = ANY($3::text[])
               OR EXISTS (SELECT 1 FROM unnest($4::text[]) q
                          WHERE strpos(r.quote, q) > 0 OR strpos(q, r.quote) > 0))
        RETURNING r.episode_id, r.message_ordinal
        """,
        tombstone.tenant,
        tombstone.principal,
        statements,
        quotes,
    )
    return rows


async def _drop_orphan_entities(conn: asyncpg.Connection, gone: list[asyncpg.Record]) -> None:
    entities = {
        row[column]
        for row in gone
        for column in ("subject_entity_id", "object_entity_id")
        if row[column] is not None
    }
    await conn.execute(
        """
        DELETE FROM entity e WHERE e.entity_id = ANY($1::uuid[])
          AND NOT EXISTS (SELECT 1 FROM belief b
                          WHERE b.subject_entity_id = e.entity_id
                             OR b.object_entity_id = e.entity_id)
        """,
        list(entities),
    )


async def forget_principal(conn: asyncpg.Connection, tenant: str, principal: str) -> None:
    for table in _PROJECTED_BY_PRINCIPAL:
        await conn.execute(
            f"DELETE FROM {table} WHERE tenant = $1 AND principal = $2", tenant, principal
        )
    # The backlog keeps its entries (the watermarks are computed from them), not whose they were.
    await conn.execute(
        "UPDATE formation_backlog SET principal_hash = NULL, session = NULL "
        "WHERE tenant = $1 AND principal_hash = $2",
        tenant,
        principal_hash(tenant, principal),
    )
    # Crypto-shredding: with the principal's data key gone, every sealed word of theirs in the
    # log, the claims topic and every backup is unreadable for good (docs/privacy.md). In this
    # transaction, so the key goes exactly when the rows do.
    await destroy_data_key(conn, tenant, principal)
    # The tombstone's hash, where a replay keeps it: the log names them by a pseudonym that
    # maps to nobody from now on, so a replay cannot make this tombstone again (migration 0044).
    await conn.execute(
        "INSERT INTO public.principal_forgotten (principal_hash) VALUES ($1) "
        "ON CONFLICT DO NOTHING",
        principal_hash(tenant, principal),
    )
    # Vectors are derived from the words: every embedding generation's go with the key.
    await embedding_store.forget_principal(conn, tenant, principal)
    # Notifications owed about them are never sent (ids only, but theirs); the store queues the
    # principal.forgotten event after this, which the notifier owes the tenant's endpoints.
    await drop_principal_deliveries(conn, tenant, principal)
    for shared in SHARED_BY_PRINCIPAL:
        await conn.execute(
            f"DELETE FROM {shared} WHERE tenant = $1 AND principal = $2", tenant, principal
        )


async def words_left(
    conn: asyncpg.Connection | asyncpg.Pool, *, tenant: str, principal: str
) -> int:
    """The principal's beliefs, refusals and indexed messages still projected: 0 once a
    forgetting has applied (what the inspector's "Forget me" shows before it says done)."""
    return int(
        await conn.fetchval(
            "SELECT (SELECT count(*) FROM belief WHERE tenant = $1 AND principal = $2) "
            "+ (SELECT count(*) FROM refusal WHERE tenant = $1 AND principal = $2) "
            "+ (SELECT count(*) FROM message WHERE tenant = $1 AND principal = $2)",
            tenant,
            principal,
        )
    )
