-- Generations (issue 11): a generation is a formation policy version with its own projection
-- (a PostgreSQL schema holding every per-generation table), its own consumer groups and its own
-- claims topic. Exactly one generation is live; readers read it unless they name another, or a
-- generation built for some principals was promoted for them ('serving'): those principals'
-- readers read it, everyone else the live one (seed 000: re-derivation is opt-in per person).
-- The tables in `public` are the first generation: its policy version is recorded by the first
-- worker that starts against it ('legacy' until then).

CREATE TABLE generation (
    generation_id  text PRIMARY KEY CHECK (generation_id ~ '^[a-z0-9_]{1,32}$'),
    schema_name    text NOT NULL UNIQUE CHECK (schema_name ~ '^[a-z_][a-z0-9_]{0,62}$'),
    policy_version text NOT NULL,
    policy_yaml    text,
    tenant         text,             -- NULL: every tenant
    principals     text[] NOT NULL DEFAULT '{}',  -- empty: every principal (of the tenant)
    build          integer NOT NULL DEFAULT 1 CHECK (build >= 1),  -- again after a drop: new groups
    status         text NOT NULL CHECK (status IN
                       ('building', 'following', 'live', 'serving', 'dropped')),
    created_at     timestamptz NOT NULL DEFAULT now(),
    promoted_at    timestamptz
);

-- Exactly one live generation: at most one by this index, at least one by promote, which
-- flips both rows in one transaction.
CREATE UNIQUE INDEX generation_one_live ON generation ((true)) WHERE status = 'live';

INSERT INTO generation (generation_id, schema_name, policy_version, status, promoted_at)
VALUES ('public', 'public', 'legacy', 'live', now());

-- Model-answer receipts: every model reply, keyed by the model's identity, the digest of the
-- request's fixed part (prompt bytes and the relations it offers) and the digest of the exact
-- input (the redacted message and its role). Shared by every generation, so a re-derivation
-- that changes only gating, resolution or thresholds asks the model nothing. Per principal,
-- so that forgetting a principal erases them and one principal's answers never serve another.
CREATE TABLE model_receipt (
    tenant         text NOT NULL,
    principal      text NOT NULL,
    model_name     text NOT NULL,
    model_origin   text NOT NULL,
    prompt_digest  text NOT NULL,
    input_digest   text NOT NULL,
    proposals      jsonb NOT NULL,
    latency_ms     double precision NOT NULL CHECK (latency_ms >= 0),
    created_at     timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (tenant, principal, model_name, model_origin, prompt_digest, input_digest)
);
