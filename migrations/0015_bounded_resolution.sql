-- engram: each generation
-- engram: replaces sha256 c3b6cd8d4debdf881d869e89119ace645556cb127b0d5c283bc02bb5decfa158
-- (the same DDL as a loop over the schemas in PL/pgSQL; migrations/README.md)
--
-- A projector whose cost does not grow with a principal's history (issue 13).
--
-- 1. Resolution reads only what it consults: the current values of a claim's key (a
--    single-valued relation) or of the claim itself (a multi-valued one), and the newest past
--    value of the same claim. Each is an index range of a few rows, whatever the length of the
--    key's history; the conflict-key index alone made each batch scan every value a key ever had.
--    Rows written before migration 0006 have no object key and are always read with their key.
-- 2. A late batch rewinds only the batches after it: each kept batch carries what undoing it
--    takes — the beliefs and entities it created, and the image before it of every older belief
--    and entity it changed (formation/undo.py, JSON). NULL for batches kept before this column:
--    a suffix holding one is resolved again from nothing, as before.
-- 3. Undoing a suffix deletes the runs, beliefs and entities its batches created; PostgreSQL
--    checks each foreign key into a deleted row with a query per row, which without an index
--    scans the whole referencing table (most of what a rewind cost per batch before).
--
-- Run in public and in every generation schema (the first line): a generation created before
-- this migration gets the same column and indexes here; later ones copy them (LIKE … INCLUDING
-- ALL).
--
-- 4. A generation created before migration 0013 has no ``claims_history`` of its own: 0013 made
--    only the public table, and the generation's projector (search_path: the generation, then
--    public) kept that generation's batches in public's — where a rewind of the live generation
--    would read them as its own. Such a generation gets its own table here, and the rows of runs
--    it applied and the live generation did not move into it. In public, and in a generation
--    that had its own table from the start (its projector never wrote to public's), the move
--    finds no row: every run it could move is public's own or was never kept there.

CREATE TABLE IF NOT EXISTS claims_history (LIKE public.claims_history INCLUDING ALL);
ALTER TABLE claims_history ADD COLUMN IF NOT EXISTS undo bytea;
WITH moved AS (
    DELETE FROM public.claims_history h USING consolidation_run r
    WHERE h.run_id = r.run_id
      AND NOT EXISTS (SELECT 1 FROM public.consolidation_run p WHERE p.run_id = h.run_id)
    RETURNING h.run_id, h.tenant, h.principal, h.order_key, h.payload, h.undo
)
INSERT INTO claims_history (run_id, tenant, principal, order_key, payload, undo)
SELECT run_id, tenant, principal, order_key, payload, undo FROM moved;

CREATE INDEX IF NOT EXISTS belief_current_by_object ON belief
    (tenant, principal, subject_key, relation, facet, object_key)
    WHERE status IN ('active', 'provisional');
CREATE INDEX IF NOT EXISTS belief_past_by_claim ON belief
    (tenant, principal, subject_key, relation, facet, object_key, polarity, valid_from, belief_id)
    WHERE status = 'superseded';
CREATE INDEX IF NOT EXISTS belief_without_object_key ON belief
    (tenant, principal, subject_key, relation, facet)
    WHERE object_key IS NULL;

CREATE INDEX IF NOT EXISTS belief_formation_run ON belief (formation_run);
CREATE INDEX IF NOT EXISTS evidence_run ON evidence (run_id);
CREATE INDEX IF NOT EXISTS belief_rejection_run ON belief_rejection (run_id);
CREATE INDEX IF NOT EXISTS belief_subject_entity ON belief (subject_entity_id)
    WHERE subject_entity_id IS NOT NULL;
CREATE INDEX IF NOT EXISTS belief_object_entity ON belief (object_entity_id)
    WHERE object_entity_id IS NOT NULL;
CREATE INDEX IF NOT EXISTS belief_superseded_by ON belief (superseded_by)
    WHERE superseded_by IS NOT NULL;
CREATE INDEX IF NOT EXISTS belief_supersedes ON belief (supersedes)
    WHERE supersedes IS NOT NULL;
