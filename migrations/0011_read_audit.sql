-- engram: each generation
-- engram: replaces sha256 8fcefa6632dea5adb1708d15e56a090beb1a5fc75f15e52cb7906c012a166994
-- (the same DDL as a loop over the schemas in PL/pgSQL; migrations/README.md)
--
-- The read and audit API (issue 14, item 4): the backlog learns whose episode each entry is
-- (the SHA-256 of tenant/principal, as a principal tombstone holds it, and the session: metadata
-- only), so a session's diagnosis can show the attempts and parking of episodes that never
-- formed; and indexes for the paged reads, so a page costs the same on the millionth belief as
-- on the first. The hash, not the name: episodes of a forgotten principal still reach the
-- backlog, and nothing there may name them.
--
-- Run in public and in every generation schema (the first line): a generation created before
-- this migration gets the same columns and indexes here; later ones copy them (LIKE … INCLUDING
-- ALL).

ALTER TABLE formation_backlog ADD COLUMN IF NOT EXISTS principal_hash text;
ALTER TABLE formation_backlog ADD COLUMN IF NOT EXISTS session text;
-- A session's episodes, formed or not.
CREATE INDEX IF NOT EXISTS formation_backlog_session ON formation_backlog
    (tenant, principal_hash, session) WHERE principal_hash IS NOT NULL;
-- Belief pages in their order (valid_from, belief_id); current beliefs on their own.
CREATE INDEX IF NOT EXISTS belief_page ON belief (tenant, principal, valid_from, belief_id);
CREATE INDEX IF NOT EXISTS belief_page_current ON belief (tenant, principal, valid_from, belief_id)
    WHERE status IN ('active', 'provisional');
-- A session's runs, and a run's refusals.
CREATE INDEX IF NOT EXISTS consolidation_run_session ON consolidation_run
    (tenant, principal, session);
CREATE INDEX IF NOT EXISTS refusal_run ON refusal (run_id);
