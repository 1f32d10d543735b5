-- Resolution reads only what it consults (issue 13): the current values of a claim's key (a
-- single-valued relation) or of the claim itself (a multi-valued one), and the newest past value
-- of the same claim. Each is an index range of a few rows, whatever the length of the key's
-- history; the conflict-key index alone made each batch scan every value a key ever had.
CREATE INDEX belief_current_by_object ON belief (tenant, principal, subject_key, relation, facet, object_key)
    WHERE status IN ('active', 'provisional');
CREATE INDEX belief_past_by_claim
    ON belief (tenant, principal, subject_key, relation, facet, object_key, polarity, valid_from, belief_id)
    WHERE status = 'superseded';
-- Rows written before migration 0006 have no object key and are always read with their key.
CREATE INDEX belief_without_object_key ON belief (tenant, principal, subject_key, relation, facet)
    WHERE object_key IS NULL;

-- A late batch rewinds only the batches after it (issue 13): each kept batch carries what
-- undoing it takes — the beliefs and entities it created, and the image before it of every older
-- belief and entity it changed (formation/undo.py, JSON). NULL for batches kept before this
-- column: a suffix holding one is resolved again from nothing, as before.
ALTER TABLE claims_history ADD COLUMN undo bytea;
-- Generations created before this migration copied claims_history without the column.
DO $$
DECLARE
    s text;
BEGIN
    FOR s IN SELECT table_schema FROM information_schema.tables
             WHERE table_name = 'claims_history' AND table_schema <> current_schema()
    LOOP
        EXECUTE format('ALTER TABLE %I.claims_history ADD COLUMN IF NOT EXISTS undo bytea', s);
    END LOOP;
END
$$;
