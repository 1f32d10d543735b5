-- Generations (issue 11): a generation is a formation policy version with its own projection
-- (a PostgreSQL schema holding every per-generation table), its own consumer groups and its own
-- claims topic. Exactly one generation is live; readers read it unless they name another.
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
    status         text NOT NULL CHECK (status IN ('building', 'following', 'live', 'dropped')),
    created_at     timestamptz NOT NULL DEFAULT now(),
    promoted_at    timestamptz
);

-- Exactly one live generation: at most one by this index, at least one by promote, which
-- flips both rows in one transaction.
CREATE UNIQUE INDEX generation_one_live ON generation ((true)) WHERE status = 'live';

INSERT INTO generation (generation_id, schema_name, policy_version, status, promoted_at)
VALUES ('public', 'public', 'legacy', 'live', now());
