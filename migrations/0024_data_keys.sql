-- Per-principal data keys (issue 26, item 1; keys/, docs/privacy.md "Per-principal keys").
-- One data key per (tenant, principal), created on first use, stored only wrapped by a
-- key-encryption key (KEK) whose id is kept beside it; the associated data of the wrap binds it
-- to tenant, principal and key id, so a wrapped key copied to another row does not unwrap.
-- Destroying a key (forgetting) deletes its row and leaves only its id in destroyed_data_key,
-- so a reader can say "destroyed" rather than "unknown"; the id reveals nothing of the key.
-- kek_canary holds one meaningless value wrapped by each KEK in use: the start-up check
-- unwraps it (and one data key per KEK id), so a wrong KEK fails at once, even before any
-- data key exists. These tables are shared, not per policy generation.

CREATE TABLE data_key (
    tenant      text NOT NULL,
    principal   text NOT NULL,
    key_id      text NOT NULL UNIQUE,
    kek_id      text NOT NULL,
    wrapped     bytea NOT NULL,
    created_at  timestamptz NOT NULL DEFAULT now(),
    rewrapped_at timestamptz,
    PRIMARY KEY (tenant, principal)
);

-- The start-up check's loose scan over KEK ids, and rotation's batches.
CREATE INDEX data_key_by_kek ON data_key (kek_id, tenant, principal);

CREATE TABLE destroyed_data_key (
    tenant        text NOT NULL,
    principal     text NOT NULL,
    key_id        text NOT NULL,
    destroyed_at  timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (tenant, principal, key_id)
);

CREATE TABLE kek_canary (
    kek_id   text PRIMARY KEY,
    wrapped  bytea NOT NULL
);
