-- Beliefs, their evidence, entities, refusals and consolidation runs: the projection of the
-- episodic log. Every row is derived from the log and can be re-derived by replaying it, so
-- identities are name-based UUIDs computed from log content, and times are event times.

CREATE TABLE entity (
    entity_id        uuid PRIMARY KEY,
    tenant           text NOT NULL,
    principal        text NOT NULL,
    normalized_name  text NOT NULL,
    canonical_name   text NOT NULL,
    aliases          text[] NOT NULL DEFAULT '{}' CHECK (cardinality(aliases) <= 16),
    UNIQUE (tenant, principal, normalized_name)
);

CREATE TABLE consolidation_run (
    run_id            uuid PRIMARY KEY,
    tenant            text NOT NULL,
    principal         text NOT NULL,
    project           text NOT NULL,
    session           text NOT NULL,
    episode_id        uuid NOT NULL,
    trigger           text NOT NULL CHECK (trigger IN ('turn', 'explicit')),
    scope             text NOT NULL,
    policy_version    text NOT NULL,
    source_topic      text NOT NULL,
    source_partition  integer NOT NULL,
    source_offset     bigint NOT NULL,
    occurred_at       timestamptz NOT NULL,
    proposed          integer NOT NULL,
    admitted          integer NOT NULL,
    committed         integer NOT NULL,
    reinforced        integer NOT NULL,
    superseded        integer NOT NULL,
    conflicted        integer NOT NULL,
    refused           integer NOT NULL,
    overflow          integer NOT NULL,
    retracted         integer NOT NULL,
    refusal_reasons   jsonb NOT NULL DEFAULT '{}',
    CHECK (proposed = admitted + refused + overflow)
);
CREATE INDEX consolidation_run_principal ON consolidation_run (tenant, principal, occurred_at);

CREATE TABLE belief (
    belief_id          uuid PRIMARY KEY,
    tenant             text NOT NULL,
    principal          text NOT NULL,
    subject_kind       text NOT NULL CHECK (subject_kind IN ('speaker', 'project', 'entity')),
    subject_entity_id  uuid REFERENCES entity (entity_id),
    subject_key        text NOT NULL,
    relation           text NOT NULL REFERENCES relation (name) ON DELETE RESTRICT,
    object_kind        text NOT NULL CHECK (object_kind IN ('speaker', 'project', 'entity', 'value')),
    object_entity_id   uuid REFERENCES entity (entity_id),
    object_text        text NOT NULL,
    facet              text NOT NULL DEFAULT '',
    statement          text NOT NULL,
    belief_type        text NOT NULL,
    polarity           text NOT NULL CHECK (polarity IN ('assert', 'retract')),
    authority          text NOT NULL CHECK (authority IN ('user', 'affirmed', 'inferred')),
    scope              text NOT NULL,
    origin_scopes      text[] NOT NULL,
    portability        text NOT NULL CHECK (portability IN ('portable', 'contextual', 'local')),
    sensitivity        text[] NOT NULL DEFAULT '{}',
    confidence         real NOT NULL CHECK (confidence >= 0 AND confidence <= 1),
    status             text NOT NULL CHECK (status IN
                           ('provisional', 'active', 'superseded', 'expired', 'retired')),
    is_single          boolean NOT NULL,
    corroboration      integer NOT NULL DEFAULT 1 CHECK (corroboration >= 1),
    last_reinforced_at timestamptz NOT NULL,
    valid_from         timestamptz NOT NULL,
    valid_to           timestamptz,
    known_from         timestamptz NOT NULL,
    known_to           timestamptz,
    superseded_by      uuid REFERENCES belief (belief_id) DEFERRABLE INITIALLY DEFERRED,
    supersedes         uuid REFERENCES belief (belief_id) DEFERRABLE INITIALLY DEFERRED,
    conflicts_with     uuid[] NOT NULL DEFAULT '{}',
    flagged_for_review boolean NOT NULL DEFAULT false,
    formation_run      uuid NOT NULL REFERENCES consolidation_run (run_id),
    policy_version     text NOT NULL,
    role               text NOT NULL,
    CHECK (valid_to IS NULL OR valid_to >= valid_from),
    CHECK (known_to IS NULL OR known_to >= known_from),
    -- One current value: a single-valued relation has at most one value per principal,
    -- subject and facet over any overlapping valid and known time. Whatever path writes.
    -- Beliefs in an unresolved conflict are linked both ways and deliberately both live.
    CONSTRAINT belief_one_current_value EXCLUDE USING gist (
        tenant WITH =,
        principal WITH =,
        subject_key WITH =,
        relation WITH =,
        facet WITH =,
        tstzrange(valid_from, valid_to, '[)') WITH &&,
        tstzrange(known_from, known_to, '[)') WITH &&
    ) WHERE (is_single AND polarity = 'assert' AND cardinality(conflicts_with) = 0)
);
CREATE INDEX belief_principal_current ON belief (tenant, principal, status);
CREATE INDEX belief_conflict_key ON belief (tenant, principal, subject_key, relation, facet);

CREATE TABLE evidence (
    evidence_id      uuid PRIMARY KEY,
    belief_id        uuid NOT NULL REFERENCES belief (belief_id),
    tenant           text NOT NULL,
    principal        text NOT NULL,
    project          text NOT NULL,
    session          text NOT NULL,
    episode_id       uuid NOT NULL,
    source_topic     text NOT NULL,
    source_partition integer NOT NULL,
    source_offset    bigint NOT NULL,
    message_ordinal  integer NOT NULL,
    role             text NOT NULL,
    quote            text NOT NULL,
    span_start       integer NOT NULL CHECK (span_start >= 0),
    span_end         integer NOT NULL CHECK (span_end >= span_start),
    extractor        text NOT NULL,
    run_id           uuid NOT NULL REFERENCES consolidation_run (run_id),
    occurred_at      timestamptz NOT NULL,
    UNIQUE (belief_id, episode_id, message_ordinal)
);
CREATE INDEX evidence_belief ON evidence (belief_id);

CREATE TABLE refusal (
    refusal_id       uuid PRIMARY KEY,
    run_id           uuid NOT NULL REFERENCES consolidation_run (run_id),
    tenant           text NOT NULL,
    principal        text NOT NULL,
    project          text NOT NULL,
    episode_id       uuid NOT NULL,
    message_ordinal  integer NOT NULL,
    role             text NOT NULL,
    relation         text NOT NULL,  -- verbatim, deliberately no foreign key
    statement        text NOT NULL,
    quote            text NOT NULL,
    reason           text NOT NULL CHECK (reason IN (
        'unmapped_relation', 'unresolvable_subject', 'unlocatable_quote', 'not_asserted',
        'not_current', 'duplicate_claim', 'not_spoken_by_principal', 'entity_name_limit',
        'conflicting_value', 'untrusted_source', 'secret', 'pii', 'transient',
        'system_restatement', 'instruction_shaped', 'scope_mismatch', 'out_of_order')),
    detail           text NOT NULL DEFAULT '',
    extractor        text NOT NULL,
    policy_version   text NOT NULL,
    occurred_at      timestamptz NOT NULL
);
CREATE INDEX refusal_principal ON refusal (tenant, principal, occurred_at);
