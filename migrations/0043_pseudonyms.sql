-- Pseudonyms on the log (docs/privacy.md, "Who a record is about"). With log encryption on, a
-- principal's identifier travels on the log only inside the sealed part of an event; what stays
-- in clear (the routing fields of a sealed event, the record keys of engram.claims, a deletion
-- and a forgetting) names a pseudonym instead: a random id kept here, beside the principal's data
-- key, and deleted with it. Once the key is destroyed nothing links the pseudonym back to the
-- name, not even whoever knows the name and holds the KEK and the database.
--
-- destroyed_data_key no longer names the principal at all: it paired the principal's hash (which
-- anyone who knows the name computes) with the destroyed key's id, which every sealed token names
-- in clear. It now keeps the destroyed key's id and pseudonym, both random, so a reader can still
-- tell "destroyed" from "never existed". Shared tables, not per generation.

ALTER TABLE public.data_key ADD COLUMN IF NOT EXISTS pseudonym text;
UPDATE public.data_key SET pseudonym = 'psn-' || replace(gen_random_uuid()::text, '-', '')
    WHERE pseudonym IS NULL;
ALTER TABLE public.data_key ALTER COLUMN pseudonym SET NOT NULL;
CREATE UNIQUE INDEX IF NOT EXISTS data_key_by_pseudonym ON public.data_key (tenant, pseudonym);

ALTER TABLE public.destroyed_data_key ADD COLUMN IF NOT EXISTS pseudonym text;
ALTER TABLE public.destroyed_data_key DROP CONSTRAINT IF EXISTS destroyed_data_key_pkey;
-- a principal forgotten before encryption is named by a stand-in id per forgetting
-- (ingest/log_encryption.py): the hash goes, and with it the row's link to the name
DELETE FROM public.destroyed_data_key a USING public.destroyed_data_key b
    WHERE a.tenant = b.tenant AND a.key_id = b.key_id AND a.ctid < b.ctid;
ALTER TABLE public.destroyed_data_key DROP COLUMN IF EXISTS principal_hash;
ALTER TABLE public.destroyed_data_key ADD PRIMARY KEY (tenant, key_id);
CREATE UNIQUE INDEX IF NOT EXISTS destroyed_data_key_by_pseudonym
    ON public.destroyed_data_key (tenant, pseudonym);
