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
-- Generation schemas copy the public tables when they are created (LIKE … INCLUDING ALL), so a
-- generation created before this migration gets the same column and indexes here.
--
-- 4. A generation created before migration 0013 has no ``claims_history`` of its own: 0013 made
--    only the public table, and the generation's projector (search_path: the generation, then
--    public) kept that generation's batches in public's — where a rewind of the live generation
--    would read them as its own. Such a generation gets its own table here, and the rows of runs
--    it applied and the live generation did not move into it.

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
        IF target <> 'public' AND to_regclass(format('%I.claims_history', target)) IS NULL THEN
            EXECUTE format('CREATE TABLE %I.claims_history '
                           '(LIKE public.claims_history INCLUDING ALL)', target);
            EXECUTE format('WITH moved AS ('
                           '  DELETE FROM public.claims_history h USING %I.consolidation_run r'
                           '  WHERE h.run_id = r.run_id AND NOT EXISTS ('
                           '    SELECT 1 FROM public.consolidation_run p WHERE p.run_id = h.run_id)'
                           '  RETURNING h.*) '
                           'INSERT INTO %I.claims_history SELECT * FROM moved', target, target);
        END IF;
        EXECUTE format('CREATE INDEX IF NOT EXISTS belief_current_by_object ON %I.belief '
                       '(tenant, principal, subject_key, relation, facet, object_key) '
                       'WHERE status IN (''active'', ''provisional'')', target);
        EXECUTE format('CREATE INDEX IF NOT EXISTS belief_past_by_claim ON %I.belief '
                       '(tenant, principal, subject_key, relation, facet, object_key, polarity, '
                       'valid_from, belief_id) WHERE status = ''superseded''', target);
        EXECUTE format('CREATE INDEX IF NOT EXISTS belief_without_object_key ON %I.belief '
                       '(tenant, principal, subject_key, relation, facet) '
                       'WHERE object_key IS NULL', target);

        EXECUTE format('ALTER TABLE %I.claims_history ADD COLUMN IF NOT EXISTS undo bytea', target);

        EXECUTE format('CREATE INDEX IF NOT EXISTS belief_formation_run ON %I.belief '
                       '(formation_run)', target);
        EXECUTE format('CREATE INDEX IF NOT EXISTS evidence_run ON %I.evidence (run_id)', target);
        EXECUTE format('CREATE INDEX IF NOT EXISTS belief_rejection_run ON %I.belief_rejection '
                       '(run_id)', target);
        EXECUTE format('CREATE INDEX IF NOT EXISTS belief_subject_entity ON %I.belief '
                       '(subject_entity_id) WHERE subject_entity_id IS NOT NULL', target);
        EXECUTE format('CREATE INDEX IF NOT EXISTS belief_object_entity ON %I.belief '
                       '(object_entity_id) WHERE object_entity_id IS NOT NULL', target);
        EXECUTE format('CREATE INDEX IF NOT EXISTS belief_superseded_by ON %I.belief '
                       '(superseded_by) WHERE superseded_by IS NOT NULL', target);
        EXECUTE format('CREATE INDEX IF NOT EXISTS belief_supersedes ON %I.belief '
                       '(supersedes) WHERE supersedes IS NOT NULL', target);
    END LOOP;
END
$$;
