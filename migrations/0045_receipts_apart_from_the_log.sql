-- engram: each generation
-- A forgetting's receipt and tombstone no longer name the forgetting's record on the log
-- (docs/privacy.md, "Who a record is about"). That record names the forgotten principal's
-- pseudonym, and both rows keep the hash anyone who knows the name can compute: the record's id
-- or its exact time beside the hash linked the name to the pseudonym, and so to every record of
-- theirs. A forgetting's receipt is now keyed by an id derived from the record's id and a random
-- salt kept beside the principal's data key, which the forgetting deletes with the key; the
-- tombstone keeps no id and only the day.
ALTER TABLE public.data_key ADD COLUMN IF NOT EXISTS receipt_salt uuid NOT NULL
    DEFAULT gen_random_uuid();
ALTER TABLE principal_tombstone ALTER COLUMN event_id DROP NOT NULL;
UPDATE principal_tombstone
    SET event_id = NULL,
        forgotten_at = date_trunc('day', forgotten_at AT TIME ZONE 'UTC') AT TIME ZONE 'UTC';
UPDATE erasure_receipt
    SET requested_at = date_trunc('day', requested_at AT TIME ZONE 'UTC') AT TIME ZONE 'UTC'
    WHERE kind = 'principal.forgotten';
