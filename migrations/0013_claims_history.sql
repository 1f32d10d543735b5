-- The claims batches a principal's beliefs were resolved from (issue 15, order-independent
-- resolution). Resolution runs a principal's batches in one canonical order — event time, then
-- project, episode and batch id, packed into ``order_key`` — whatever order the claims topic
-- delivered them in. When a batch arrives that belongs before one already applied (the
-- principal's projects sit on episode partitions that interleave differently), the projector
-- re-resolves the principal from these rows. A projection of the log like the rest: emptied by a
-- replay, copied into every generation, deleted with a forgotten principal; a deletion scrubs the
-- deleted words from the payloads it names.

CREATE TABLE claims_history (
    run_id     uuid PRIMARY KEY,
    tenant     text NOT NULL,
    principal  text NOT NULL,
    order_key  bytea NOT NULL,
    payload    bytea NOT NULL
);

CREATE INDEX claims_history_by_principal ON claims_history (tenant, principal, order_key);
