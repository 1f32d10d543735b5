-- What the projector's writes cost PostgreSQL (issue 13, item 1; docs/benchmarks.md, session 6).
--
-- 1. A kept claims batch (``claims_history.payload``, ~3.4 KB of JSON, and its undo record) is
--    past the TOAST threshold, so every insert compressed it with pglz: ~75 µs of server CPU a
--    batch, most of what keeping batches cost. lz4 compresses the same rows about three times
--    faster to within ~5% of the size (measured on the bench's 3000 batches: 1,483 → 1,569
--    bytes a payload). Rows already stored keep their pglz datums; both read back the same.
-- 2. ``evidence_belief`` (belief_id) repeats the leading column of the unique index on
--    (belief_id, episode_id, message_ordinal): every lookup by belief_id — the evidence of a
--    belief, the foreign-key check when a belief is deleted — is served by that index's prefix
--    as well, and each evidence insert paid for maintaining both.
--
-- Generation schemas copy the public tables with LIKE … INCLUDING ALL (compression and indexes
-- included), so a generation created after this migration has both already; one created
-- before gets them here.

DO $$
DECLARE
    target text;
BEGIN
    FOR target IN
        SELECT g.schema_name FROM generation g
        JOIN pg_namespace n ON n.nspname = g.schema_name
        WHERE g.status <> 'dropped'
        UNION SELECT 'public'
    LOOP
        IF to_regclass(format('%I.claims_history', target)) IS NOT NULL THEN
            EXECUTE format('ALTER TABLE %I.claims_history '
                           'ALTER COLUMN payload SET COMPRESSION lz4, '
                           'ALTER COLUMN undo SET COMPRESSION lz4', target);
        END IF;
        EXECUTE format('DROP INDEX IF EXISTS %I.evidence_belief', target);
    END LOOP;
END
$$;
