-- engram: each generation
-- Honest receipts for deleting a belief and forgetting a principal (docs/privacy.md, "What a
-- deletion or a forgetting answers"). The projector writes one row per `belief.deleted` and
-- `principal.forgotten` event it applies, in the transaction that erases: what it erased and
-- where (counts per place), the data key it destroyed, and how many of the episodes that held
-- the words sit in the episodic log sealed, in clear, or unknown. No words, and no principal's
-- name: a forgotten person is named by the SHA-256 of tenant/principal, as the principal
-- tombstone names them. Every door (CLI, API, MCP, the inspector) answers from this row.
--
-- formation_backlog.log_words: how the event formation read holds a person's words on the log:
-- 'clear' (a plaintext turn, memory or correction), 'sealed', or 'none' (a deletion or a
-- forgetting: ids and hashes only); NULL for entries read before this migration (unknown). It is
-- what lets a receipt say "your words stay in the episodic log" instead of "nothing remains".

CREATE TABLE IF NOT EXISTS erasure_receipt (
    event_id          uuid PRIMARY KEY,
    kind              text NOT NULL CHECK (kind IN ('belief.deleted', 'principal.forgotten')),
    tenant            text NOT NULL,
    principal_hash    text NOT NULL,
    belief_id         uuid,
    requested_at      timestamptz NOT NULL,
    applied_at        timestamptz NOT NULL DEFAULT now(),
    already           boolean NOT NULL DEFAULT false,
    erased            jsonb NOT NULL,
    data_key_id       text,
    episodes_sealed   integer NOT NULL DEFAULT 0 CHECK (episodes_sealed >= 0),
    episodes_in_clear integer NOT NULL DEFAULT 0 CHECK (episodes_in_clear >= 0),
    episodes_unknown  integer NOT NULL DEFAULT 0 CHECK (episodes_unknown >= 0)
);
CREATE INDEX IF NOT EXISTS erasure_receipt_by_principal
    ON erasure_receipt (tenant, principal_hash, applied_at);

-- What the message indexer and the embedding follower removed of a forgotten principal before
-- the projector applied the forgetting (each reads the principal.forgotten record on its own):
-- counts only, taken into the receipt when the projector writes it (projections/erased.py).
CREATE TABLE IF NOT EXISTS erasure_part (
    tenant          text NOT NULL,
    principal_hash  text NOT NULL,
    place           text NOT NULL,
    rows            integer NOT NULL CHECK (rows >= 0),
    PRIMARY KEY (tenant, principal_hash, place)
);

ALTER TABLE formation_backlog ADD COLUMN IF NOT EXISTS log_words text
    CHECK (log_words IN ('clear', 'sealed', 'none'));

-- A destroyed key's record names its principal by hash, not by name: forgetting leaves nothing in
-- PostgreSQL that names the person (the principal tombstone holds the same hash). Shared, not
-- per generation: done once (the DO block finds the name column gone in every later schema's
-- run of this body).
DO $$
BEGIN
    IF EXISTS (SELECT 1 FROM information_schema.columns WHERE table_schema = 'public'
               AND table_name = 'destroyed_data_key' AND column_name = 'principal') THEN
        ALTER TABLE public.destroyed_data_key ADD COLUMN principal_hash text;
        UPDATE public.destroyed_data_key
            SET principal_hash = encode(sha256(convert_to(tenant || '/' || principal, 'UTF8')), 'hex');
        ALTER TABLE public.destroyed_data_key DROP CONSTRAINT destroyed_data_key_pkey;
        ALTER TABLE public.destroyed_data_key DROP COLUMN principal;
        ALTER TABLE public.destroyed_data_key ALTER COLUMN principal_hash SET NOT NULL;
        ALTER TABLE public.destroyed_data_key ADD PRIMARY KEY (tenant, principal_hash, key_id);
    END IF;
END $$;
