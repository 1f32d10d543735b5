-- engram: each generation
-- engram: replaces sha256 4e7f1fc816e9bca951b7068f5529a86d37f4457da5bc84ec75aaaab6450eb945
-- (the same DDL, written out for public and as a loop over the generations; migrations/README.md)
--
-- What the projector's writes cost PostgreSQL, part two (issue 13, item 1; docs/benchmarks.md,
-- session 9).
--
-- 1. The foreign keys of the per-row provenance tables go: evidence → belief, evidence →
--    consolidation_run, refusal → consolidation_run. PostgreSQL checks a foreign key with one
--    query per inserted row (and, for a deleted belief or run, one per referencing table per
--    row); on the bench's chunks those checks were 57% of inserting evidence (10,125 rows:
--    500 → 214 ms), and each refusal paid the same check for its run. Only the projector
--    writes these tables, and it writes a run, its beliefs, their evidence and its refusals
--    from one resolution in one transaction, so the links are whole by construction — as they
--    already are in every generation schema, which never had these keys (LIKE does not copy
--    them) and whose digest equals the live one's. ``projections.integrity.broken_links``
--    checks every link with one query each; ``projection_digest`` refuses a projection with a
--    broken one, so the exactly-once, kill, rewind, forgetting and replay tests check it. The belief's own keys (its run, entities and vocabulary) stay: a chunk
--    writes few beliefs, and the vocabulary key is what refuses a relation outside it.
--
-- 2. Memory events pending publication move to a narrow table of their own. Marking an event
--    published used to UPDATE its outbox row (``published_at``): the partial index on pending
--    rows names that column, so every mark wrote a whole new tuple (~0.4 KB of jsonb) and an
--    entry in each of the outbox's three indexes — 22 µs a row, ~83 µs a batch of server time.
--    Now the projector's transaction inserts (sequence, event_id, tenant, principal) into
--    ``memory_event_pending`` next to the outbox row, and publication deletes it. The outbox
--    keeps every event, as before (the digest and the rewinds read it).
--
-- Run in public and in every generation schema (the first line). A generation never had the
-- foreign keys (LIKE does not copy them), so dropping them there finds nothing; one created
-- before this migration gets its own pending table (and sequence), filled the same way. The
-- partial index on pending rows goes with the outbox column, here and in generations.

ALTER TABLE evidence DROP CONSTRAINT IF EXISTS evidence_belief_id_fkey;
ALTER TABLE evidence DROP CONSTRAINT IF EXISTS evidence_run_id_fkey;
ALTER TABLE refusal DROP CONSTRAINT IF EXISTS refusal_run_id_fkey;

CREATE TABLE memory_event_pending (
    sequence  bigserial PRIMARY KEY,
    event_id  uuid NOT NULL,
    tenant    text NOT NULL,
    principal text NOT NULL
);

INSERT INTO memory_event_pending (event_id, tenant, principal)
SELECT event_id, tenant, principal FROM memory_event_outbox
WHERE published_at IS NULL ORDER BY sequence;

ALTER TABLE memory_event_outbox DROP COLUMN published_at;
