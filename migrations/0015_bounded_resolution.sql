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
