-- API tokens (issue 14): only the SHA-256 of a token is stored; the token itself is printed once
-- by `engram tokens create` and never again. A token reaches one tenant and either one principal
-- or, as an operator, every principal of that tenant. Revocation and expiry are checked on every
-- request (the row is read per request, so a revoke takes effect at once).
-- Shared by every generation: not a projection of the log, never copied into a generation schema.

CREATE TABLE api_token (
    token_id    uuid PRIMARY KEY,
    token_hash  text NOT NULL UNIQUE CHECK (token_hash ~ '^[0-9a-f]{64}$'),
    tenant      text NOT NULL,
    principal   text,
    operator    boolean NOT NULL DEFAULT false,
    created_at  timestamptz NOT NULL DEFAULT now(),
    expires_at  timestamptz,
    revoked_at  timestamptz,
    CHECK ((principal IS NULL) = operator),
    CHECK (expires_at IS NULL OR expires_at > created_at)
);

CREATE INDEX api_token_by_tenant ON api_token (tenant, created_at);
