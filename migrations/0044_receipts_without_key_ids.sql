-- engram: each generation
-- A forgetting's receipt no longer names the data key it destroyed, only that it did
-- (docs/privacy.md, "Who a record is about"): the row names the principal by the hash anyone who
-- knows the name can compute, and every sealed token names its key id in clear, so the two in one
-- row linked the name to every record of theirs on the log. Rows written before keep the fact.
UPDATE erasure_receipt SET data_key_id = 'destroyed' WHERE data_key_id IS NOT NULL;
