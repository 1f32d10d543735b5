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

-- Dropping the column drops the partial index on pending rows with it (here and in generations).
ALTER TABLE memory_event_outbox DROP COLUMN published_at;

-- Generations created before this migration: the same pending table, filled the same way.
DO $$
DECLARE
    target text;
BEGIN
    FOR target IN
        SELECT g.schema_name FROM generation g
        JOIN pg_namespace n ON n.nspname = g.schema_name
        WHERE g.status <> 'dropped' AND g.schema_name <> 'public'  -- the live one, done above
    LOOP
        IF to_regclass(format('%I.memory_event_outbox', target)) IS NOT NULL THEN
            EXECUTE format('CREATE TABLE %I.memory_event_pending '
                           '(LIKE public.memory_event_pending INCLUDING ALL)', target);
            EXECUTE format('CREATE SEQUENCE %I.memory_event_pending_sequence_seq '
                           'OWNED BY %I.memory_event_pending.sequence', target, target);
            EXECUTE format('ALTER TABLE %I.memory_event_pending ALTER COLUMN sequence '
                           'SET DEFAULT nextval(%L)', target,
                           target || '.memory_event_pending_sequence_seq');
            EXECUTE format('INSERT INTO %I.memory_event_pending (event_id, tenant, principal) '
                           'SELECT event_id, tenant, principal FROM %I.memory_event_outbox '
                           'WHERE published_at IS NULL ORDER BY sequence', target, target);
            EXECUTE format('ALTER TABLE %I.memory_event_outbox DROP COLUMN published_at',
                           target);
        END IF;
    END LOOP;
END
$$;
