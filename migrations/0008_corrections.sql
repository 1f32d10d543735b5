-- Corrections and forgetting (seed 000: typed rejections that survive re-derivation, deletion
-- tombstones that keep only a hash). Beliefs carry the SHA-256 of their normalised content key,
-- which is how a correction finds them: by content, never by id, since a replay mints new ids.

ALTER TABLE belief DROP CONSTRAINT belief_status_check;
ALTER TABLE belief ADD CONSTRAINT belief_status_check CHECK (status IN
    ('provisional', 'active', 'superseded', 'expired', 'retired', 'retracted'));
ALTER TABLE belief ADD COLUMN content_hash text;
ALTER TABLE belief ADD COLUMN excluded_scopes text[] NOT NULL DEFAULT '{}';
CREATE INDEX belief_content ON belief (tenant, principal, content_hash);
UPDATE belief SET content_hash = encode(sha256(convert_to(
    concat_ws(chr(31), subject_key, relation, object_key, facet, polarity), 'UTF8')), 'hex')
WHERE object_key IS NOT NULL;

ALTER TABLE refusal DROP CONSTRAINT refusal_reason_check;
ALTER TABLE refusal ADD CONSTRAINT refusal_reason_check CHECK (reason IN (
    'unmapped_relation', 'unresolvable_subject', 'unlocatable_quote', 'not_asserted',
    'not_current', 'duplicate_claim', 'not_spoken_by_principal', 'entity_name_limit',
    'conflicting_value', 'untrusted_source', 'secret', 'pii', 'transient',
    'system_restatement', 'instruction_shaped', 'scope_mismatch', 'out_of_order',
    'rejected_by_user', 'tombstoned'));

ALTER TABLE consolidation_run DROP CONSTRAINT consolidation_run_trigger_check;
ALTER TABLE consolidation_run ADD CONSTRAINT consolidation_run_trigger_check
    CHECK (trigger IN ('turn', 'explicit', 'correction'));

-- What the principal rejected, by content. Its words go (NULL) when the content is deleted;
-- the hash and the kind stay, so the rejection still matches.
CREATE TABLE belief_rejection (
    rejection_id     uuid PRIMARY KEY,
    tenant           text NOT NULL,
    principal        text NOT NULL,
    content_hash     text NOT NULL,
    kind             text NOT NULL CHECK (kind IN ('untrue', 'changed', 'not_here', 'unspecified')),
    subject_key      text,
    relation         text NOT NULL,
    object_key       text,
    facet            text,
    polarity         text NOT NULL,
    statement        text,
    replacement      text,
    scope            text NOT NULL,
    belief_id        uuid NOT NULL,
    correcting_event uuid NOT NULL,
    run_id           uuid NOT NULL REFERENCES consolidation_run (run_id),
    occurred_at      timestamptz NOT NULL
);
CREATE INDEX belief_rejection_content ON belief_rejection (tenant, principal, content_hash);

-- A deleted belief's tombstone: its content hash and ids, never its words.
CREATE TABLE belief_tombstone (
    tenant       text NOT NULL,
    principal    text NOT NULL,
    content_hash text NOT NULL,
    belief_id    uuid NOT NULL,
    event_id     uuid NOT NULL,
    deleted_at   timestamptz NOT NULL,
    PRIMARY KEY (tenant, principal, content_hash)
);

-- A forgotten principal: the SHA-256 of tenant/principal, so the tombstone itself does not
-- name them; nothing of theirs forms again.
CREATE TABLE principal_tombstone (
    principal_hash text PRIMARY KEY,
    event_id       uuid NOT NULL,
    forgotten_at   timestamptz NOT NULL
);
