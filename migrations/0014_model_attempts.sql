-- The model arm, ready for a real model (issue 12, item 4). Both tables are shared by every
-- generation, like model_receipt: they are not projections of the log's beliefs, and forgetting
-- a principal deletes their rows.

-- One row per model attempt, and one per fallback: what an operator needs to audit the model's
-- use without the content. The prompt and reply are kept only as SHA-256 digests; the failure
-- is a kind (timeout, http_status, connection, bad_reply, oversized), never an error body.
-- status 'answered' and 'failed' are attempts; 'fallback' says that in `both` mode the episode
-- message formed from the deterministic arm alone after every attempt failed (failure: why).
CREATE TABLE model_attempt (
    attempt_id        bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    tenant            text NOT NULL,
    principal         text NOT NULL,
    episode_id        uuid NOT NULL,
    message_ordinal   integer NOT NULL CHECK (message_ordinal >= 0),
    policy_version    text NOT NULL,
    model_name        text NOT NULL,
    model_origin      text NOT NULL,
    prompt_digest     text NOT NULL,
    input_digest      text NOT NULL,
    attempt           integer NOT NULL CHECK (attempt >= 1),
    status            text NOT NULL CHECK (status IN ('answered', 'failed', 'fallback')),
    failure           text,
    http_status       integer,
    prompt_sha256     text CHECK (prompt_sha256 ~ '^[0-9a-f]{64}$'),
    reply_sha256      text CHECK (reply_sha256 ~ '^[0-9a-f]{64}$'),
    latency_ms        double precision CHECK (latency_ms >= 0),
    prompt_tokens     integer CHECK (prompt_tokens >= 0),
    completion_tokens integer CHECK (completion_tokens >= 0),
    total_tokens      integer CHECK (total_tokens >= 0),
    proposals         integer CHECK (proposals >= 0),
    recorded_at       timestamptz NOT NULL DEFAULT now(),
    CHECK ((status = 'answered') = (failure IS NULL))
);

CREATE INDEX model_attempt_by_principal ON model_attempt (tenant, principal, recorded_at);
CREATE INDEX model_attempt_by_episode ON model_attempt (episode_id, message_ordinal);

-- The model's context window: each message of a session that the model arm has seen, redacted
-- of every secret and every known PII kind, at its log position. The window of a message is
-- the newest rows of its session strictly before it in the log, so it is the same in every
-- replay and after every restart (a lane forms a project's episodes in log order, and a session
-- lives in one project, so its earlier episodes are written before a later one is formed).
CREATE TABLE session_message (
    tenant          text NOT NULL,
    principal       text NOT NULL,
    project         text NOT NULL,
    session         text NOT NULL,
    topic           text NOT NULL,
    log_partition   integer NOT NULL,
    log_offset      bigint NOT NULL,
    message_ordinal integer NOT NULL,
    role            text NOT NULL,
    content         text NOT NULL,
    PRIMARY KEY (tenant, principal, project, session, topic, log_partition, log_offset,
                 message_ordinal)
);
