-- engram: each generation
-- A message is indexed with what it answers (issue 37, item 3): a short reply ("It happened at
-- the lake, last weekend") holds none of its subject's words, which are in the turn before it.
-- Each message keeps the lexemes of the previous message of its session (`context_vector`,
-- any role) and which message that was (`context_episode_id`, `context_ordinal`); BM25's
-- postings and counts (migration 0027) are made from the message's own lexemes and those of
-- its context together, so the reply is found by its subject's words. A hit still cites the
-- one message: its event id, ordinal and content are its own.
--
-- The context is the latest message of the same (tenant, principal, project, session) before
-- it in log order that the index holds, chosen by the indexer, which alone writes `message`,
-- one partition in order (a session's turns share their project's partition), so a replay
-- chooses the same one. A hidden message is never anyone's context: hiding one recomputes the
-- context of the message that had it (projections/messages/store.py, `hide_messages`), so no
-- lexeme of a deleted belief's words stays in the index through a neighbour.

ALTER TABLE message ADD COLUMN IF NOT EXISTS context_episode_id uuid;
ALTER TABLE message ADD COLUMN IF NOT EXISTS context_ordinal integer;
ALTER TABLE message ADD COLUMN IF NOT EXISTS context_vector tsvector;

CREATE INDEX IF NOT EXISTS message_in_session
    ON message (tenant, principal, project, session, source_partition, source_offset,
                message_ordinal);
CREATE INDEX IF NOT EXISTS message_by_context
    ON message (tenant, principal, context_episode_id, context_ordinal)
    WHERE context_episode_id IS NOT NULL;

WITH chained AS (
    SELECT tenant, principal, episode_id, message_ordinal,
           lag(episode_id) OVER w AS prev_episode,
           lag(message_ordinal) OVER w AS prev_ordinal,
           lag(search_vector) OVER w AS prev_vector
    FROM message
    WINDOW w AS (PARTITION BY tenant, principal, project, session
                 ORDER BY source_partition, source_offset, message_ordinal)
)
UPDATE message m
SET context_episode_id = c.prev_episode, context_ordinal = c.prev_ordinal,
    context_vector = c.prev_vector
FROM chained c
WHERE m.tenant = c.tenant AND m.principal = c.principal AND m.episode_id = c.episode_id
  AND m.message_ordinal = c.message_ordinal AND c.prev_episode IS NOT NULL;

-- The postings and counts again, from the message's lexemes and its context's.
TRUNCATE message_term, message_term_stats, message_scope_stats;

INSERT INTO message_term (tenant, principal, lexeme, episode_id, message_ordinal, role, project,
                          occurrences, length, source_offset)
SELECT m.tenant, m.principal, v.lexeme, m.episode_id, m.message_ordinal, m.role, m.project,
       greatest(cardinality(v.positions), 1),
       (SELECT coalesce(sum(cardinality(p.positions)), 0)
        FROM unnest(m.search_vector || coalesce(m.context_vector, ''::tsvector)) p),
       m.source_offset
FROM message m, unnest(m.search_vector || coalesce(m.context_vector, ''::tsvector)) v
ORDER BY m.tenant, m.principal, v.lexeme, m.episode_id, m.message_ordinal
ON CONFLICT DO NOTHING;

INSERT INTO message_scope_stats (tenant, principal, role, project, messages, length)
SELECT m.tenant, m.principal, m.role, m.project, count(*),
       sum((SELECT coalesce(sum(cardinality(v.positions)), 0)
            FROM unnest(m.search_vector || coalesce(m.context_vector, ''::tsvector)) v))
FROM message m
GROUP BY m.tenant, m.principal, m.role, m.project
ON CONFLICT DO NOTHING;

INSERT INTO message_term_stats (tenant, principal, lexeme, role, project, messages)
SELECT m.tenant, m.principal, v.lexeme, m.role, m.project, count(*)
FROM message m, unnest(m.search_vector || coalesce(m.context_vector, ''::tsvector)) v
GROUP BY m.tenant, m.principal, v.lexeme, m.role, m.project
ON CONFLICT DO NOTHING;
