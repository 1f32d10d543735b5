-- The memory-event outbox, written in the projector's transaction and drained to Kafka after
-- commit; and the user model, a view over active user-scope beliefs (one source of truth).

CREATE TABLE memory_event_outbox (
    event_id     uuid PRIMARY KEY,
    sequence     bigserial NOT NULL UNIQUE,
    tenant       text NOT NULL,
    principal    text NOT NULL,
    payload      jsonb NOT NULL,
    published_at timestamptz
);
CREATE INDEX memory_event_outbox_pending ON memory_event_outbox (sequence)
    WHERE published_at IS NULL;

CREATE VIEW user_model AS
SELECT b.tenant, b.principal, b.belief_id, b.relation, b.facet, b.belief_type,
       coalesce(oe.canonical_name, b.object_text) AS value, b.statement, b.confidence,
       b.corroboration, b.origin_scopes, b.valid_from, b.flagged_for_review
FROM belief b
LEFT JOIN entity oe ON oe.entity_id = b.object_entity_id
WHERE b.scope = 'user'
  AND b.status = 'active'
  AND b.polarity = 'assert'
  AND b.subject_kind = 'speaker'
  AND b.belief_type IN ('user_model_attr', 'preference');
