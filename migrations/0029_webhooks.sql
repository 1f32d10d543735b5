-- Notifications (engram/notifications/, docs/notifications.md): the endpoints projects register,
-- their signing secrets (wrapped by the key-encryption key, never in clear), the deliveries owed
-- to them, and the notifier's stored offsets of engram.memory-events. Shared by every projection
-- generation (not per-generation): an endpoint belongs to a tenant's project, not to a policy.

CREATE TABLE webhook_endpoint (
    endpoint_id uuid PRIMARY KEY,
    tenant text NOT NULL,
    project text NOT NULL,
    url text NOT NULL,
    events text[] NOT NULL CHECK (cardinality(events) > 0),
    created_at timestamptz NOT NULL DEFAULT now(),
    -- the current run of failed attempts (reset by a delivery); what disabling counts
    consecutive_failures integer NOT NULL DEFAULT 0 CHECK (consecutive_failures >= 0),
    failing_since timestamptz,
    disabled_at timestamptz,
    disabled_reason text,
    -- the formed watermark last owed to it (project.formed_through): only a move is news
    formed_noticed bigint,
    CHECK ((disabled_at IS NULL) = (disabled_reason IS NULL))
);
CREATE INDEX webhook_endpoint_scope ON webhook_endpoint (tenant, project);

CREATE TABLE webhook_secret (
    endpoint_id uuid NOT NULL REFERENCES webhook_endpoint ON DELETE CASCADE,
    version integer NOT NULL CHECK (version >= 1),
    kek_id text NOT NULL,
    wrapped bytea NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now(),
    -- set when a rotation replaces it: signed with until then, beside the new one
    expires_at timestamptz,
    PRIMARY KEY (endpoint_id, version)
);

CREATE TABLE webhook_delivery (
    -- the order deliveries are owed in: each endpoint gets its own in this order
    sequence bigserial PRIMARY KEY,
    -- the webhook-id header: the same on every attempt, and for the same event and endpoint
    delivery_id uuid NOT NULL UNIQUE,
    endpoint_id uuid NOT NULL REFERENCES webhook_endpoint ON DELETE CASCADE,
    tenant text NOT NULL,
    project text NOT NULL,
    principal text,
    event_type text NOT NULL,
    event_id uuid NOT NULL,
    -- the exact body sent on every attempt: ids, offsets and times, never words
    payload text NOT NULL,
    state text NOT NULL DEFAULT 'pending' CHECK (state IN ('pending', 'delivered', 'parked')),
    attempts integer NOT NULL DEFAULT 0 CHECK (attempts >= 0),
    due_at timestamptz NOT NULL DEFAULT now(),
    lease uuid,
    leased_until timestamptz,
    last_status integer,
    last_error text,
    created_at timestamptz NOT NULL DEFAULT now(),
    delivered_at timestamptz,
    parked_at timestamptz,
    UNIQUE (endpoint_id, event_id),
    CHECK ((state = 'delivered') = (delivered_at IS NOT NULL)),
    CHECK ((state = 'parked') = (parked_at IS NOT NULL))
);
-- what senders claim: each endpoint's pending deliveries in order
CREATE INDEX webhook_delivery_pending ON webhook_delivery (endpoint_id, sequence)
    WHERE state = 'pending';
CREATE INDEX webhook_delivery_due ON webhook_delivery (due_at) WHERE state = 'pending';
CREATE INDEX webhook_delivery_principal ON webhook_delivery (tenant, principal);
-- freshness: what a project's endpoints are still owed, and what failed for good
CREATE INDEX webhook_delivery_open ON webhook_delivery (tenant, project, created_at)
    WHERE state <> 'delivered';
CREATE INDEX webhook_delivery_delivered ON webhook_delivery (delivered_at)
    WHERE state = 'delivered';

CREATE TABLE webhook_offset (
    topic text NOT NULL,
    partition integer NOT NULL,
    next_offset bigint NOT NULL CHECK (next_offset >= 0),
    PRIMARY KEY (topic, partition)
);
