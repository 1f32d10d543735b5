-- engram: each generation
-- A forgetting's receipt no longer names the data key it destroyed, only that it did
-- (docs/privacy.md, "Who a record is about"): the row names the principal by the hash anyone who
-- knows the name can compute, and every sealed token names its key id in clear, so the two in one
-- row linked the name to every record of theirs on the log. Rows written before keep the fact.
UPDATE erasure_receipt SET data_key_id = 'destroyed' WHERE data_key_id IS NOT NULL;

-- The principal tombstone, kept where a replay does not empty it. A forgetting on the log names
-- the principal by pseudonym only, and once their key is gone nothing maps it back: a replay of
-- the log can no longer tell whose tombstone to make. So the projector that applies a forgetting
-- also keeps the hash here, shared by every generation, and every check of "forgotten?" reads
-- both (a re-derived generation drops a forgotten person's later turns as the live one does).
CREATE TABLE IF NOT EXISTS public.principal_forgotten (
    principal_hash text PRIMARY KEY
);
INSERT INTO public.principal_forgotten (principal_hash)
    SELECT principal_hash FROM principal_tombstone ON CONFLICT DO NOTHING;
