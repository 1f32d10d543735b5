-- The formation backlog: every episode the formation stage has read, and what became of it.
-- The formed watermark is recomputed from these rows on every read, never incremented, so it
-- cannot run past an episode whose beliefs are not yet committed (state 'formed' is set by the
-- belief projector in the same transaction as the beliefs themselves).

CREATE TABLE formation_backlog (
    topic          text    NOT NULL,
    partition      integer NOT NULL,
    "offset"       bigint  NOT NULL,
    tenant         text    NOT NULL,
    project        text    NOT NULL,
    episode_id     uuid    NOT NULL,
    occurred_at    timestamptz NOT NULL,
    appended_at    timestamptz NOT NULL,
    state          text    NOT NULL DEFAULT 'pending'
                   CHECK (state IN ('pending', 'formed', 'parked', 'requeued')),
    attempts       integer NOT NULL DEFAULT 0 CHECK (attempts >= 0),
    failure_kind   text,
    first_failed_at timestamptz,
    last_failed_at  timestamptz,
    parked_at       timestamptz,
    formed_at       timestamptz,
    PRIMARY KEY (topic, partition, "offset")
);
CREATE INDEX formation_backlog_project ON formation_backlog (tenant, project, "offset");
CREATE INDEX formation_backlog_open ON formation_backlog (tenant, project, "offset")
    WHERE state IN ('pending', 'requeued');

-- Who unparked what, and when: operators' actions on the backlog are audited.
CREATE TABLE formation_audit (
    audit_id   bigserial PRIMARY KEY,
    action     text NOT NULL CHECK (action IN ('unpark')),
    tenant     text NOT NULL,
    project    text NOT NULL,
    episode_id uuid NOT NULL,
    actor      text NOT NULL,
    at         timestamptz NOT NULL DEFAULT now()
);
