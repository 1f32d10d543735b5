-- engram: each generation
-- engram: replaces sha256 a81d417ac611f3a95673a2af9e646f2c42bbc79de8ac036d7f17b27e399acef9
-- (the same DDL as a loop over the schemas in PL/pgSQL; migrations/README.md)
--
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
-- Run in public and in every generation schema (the first line; 0015 gave each generation its
-- own claims_history): a generation created after this migration copies both with LIKE …
-- INCLUDING ALL (compression and indexes included); one created before gets them here.

ALTER TABLE claims_history
    ALTER COLUMN payload SET COMPRESSION lz4,
    ALTER COLUMN undo SET COMPRESSION lz4;
DROP INDEX IF EXISTS evidence_belief;
