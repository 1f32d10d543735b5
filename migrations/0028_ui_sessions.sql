-- The memory inspector's sessions (engram/service/sessions.py). The browser's cookie holds a
-- random session id and nothing else; only the SHA-256 of that id is stored, so whoever reads
-- this table cannot sign in as anyone. A session ends when its person signs out (the row is
-- deleted), when it expires, when its token is revoked or expires (checked on every page, and
-- `revoke_token` deletes the rows), when the token is deleted (the foreign key cascades) and when
-- the principal it shows is forgotten (projections/forgetting.py deletes the rows).
-- Shared by every generation: not a projection of the log, never copied into a generation schema.

CREATE TABLE ui_session (
    session_hash text PRIMARY KEY CHECK (session_hash ~ '^[0-9a-f]{64}$'),
    token_id     uuid REFERENCES api_token (token_id) ON DELETE CASCADE,  -- NULL: development mode
    tenant       text NOT NULL,
    principal    text NOT NULL,  -- whose memory the session shows
    operator     boolean NOT NULL,
    created_at   timestamptz NOT NULL DEFAULT now(),
    expires_at   timestamptz NOT NULL,
    CHECK (expires_at > created_at)
);

CREATE INDEX ui_session_by_token ON ui_session (token_id);
CREATE INDEX ui_session_by_principal ON ui_session (tenant, principal);
CREATE INDEX ui_session_by_expiry ON ui_session (expires_at);
