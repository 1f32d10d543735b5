-- engram: each generation
-- What Okapi BM25 reads of the index of messages, kept per principal (issue 28: recall at 100k
-- messages for one principal). Recall used to count, on every question, how many of the
-- principal's messages hold each term, and to score every message holding any term by reading
-- its row and unnesting its vector — tens of thousands of rows for a common word, 0.3–0.9 s at
-- 100k messages. These tables hold what that computed, written by the same statements that
-- write `message` (projections/message_store.py):
--
-- - `message_term`: one row per (message, lexeme) — the inverted index, a posting list per
--   principal and lexeme, with the lexeme's occurrences in the message and the message's length
--   (the sum of its lexemes' occurrences: BM25's document length). Its key and INCLUDE columns
--   let a question's postings be read and scored from the index alone;
-- - `message_term_stats`: how many messages of (tenant, principal, role, project) hold `lexeme`;
-- - `message_scope_stats`: how many messages (tenant, principal, role, project) has, and their
--   total length.
--
-- Keyed by role and project because recall's scope is a set of roles and an optional project:
-- a message has one of each, so the scope's counts are exact sums of these rows. A count that
-- reaches zero is deleted (a deleted belief's words leave no lexeme behind), and a forgotten
-- principal's rows go with their messages. A deletion writes its counts through the same upsert
-- as an insertion, with negative deltas, so the counts carry no CHECK (>= 0): PostgreSQL checks
-- the row proposed for insertion before it finds the conflict. All three are projections of the log like `message`:
-- emptied by a replay, one per generation. Existing messages are counted here, the postings in
-- key order (inserted in message order, each would land on a random page of the key's index:
-- at 1M messages that is minutes of random writes instead of one pass).

CREATE TABLE IF NOT EXISTS message_term (
    tenant          text    NOT NULL,
    principal       text    NOT NULL,
    lexeme          text    NOT NULL,
    episode_id      uuid    NOT NULL,
    message_ordinal integer NOT NULL,
    role            text    NOT NULL,
    project         text    NOT NULL,
    occurrences     integer NOT NULL,
    length          integer NOT NULL,
    source_offset   bigint  NOT NULL,
    PRIMARY KEY (tenant, principal, lexeme, episode_id, message_ordinal)
        INCLUDE (role, project, occurrences, length, source_offset)
);

CREATE TABLE IF NOT EXISTS message_term_stats (
    tenant    text   NOT NULL,
    principal text   NOT NULL,
    lexeme    text   NOT NULL,
    role      text   NOT NULL,
    project   text   NOT NULL,
    messages  bigint NOT NULL,
    PRIMARY KEY (tenant, principal, lexeme, role, project)
);

CREATE TABLE IF NOT EXISTS message_scope_stats (
    tenant    text   NOT NULL,
    principal text   NOT NULL,
    role      text   NOT NULL,
    project   text   NOT NULL,
    messages  bigint NOT NULL,
    length    bigint NOT NULL,
    PRIMARY KEY (tenant, principal, role, project)
);

INSERT INTO message_term (tenant, principal, lexeme, episode_id, message_ordinal, role, project,
                          occurrences, length, source_offset)
SELECT m.tenant, m.principal, v.lexeme, m.episode_id, m.message_ordinal, m.role, m.project,
       greatest(cardinality(v.positions), 1),
       (SELECT coalesce(sum(cardinality(p.positions)), 0) FROM unnest(m.search_vector) p),
       m.source_offset
FROM message m, unnest(m.search_vector) v
ORDER BY m.tenant, m.principal, v.lexeme, m.episode_id, m.message_ordinal
ON CONFLICT DO NOTHING;

INSERT INTO message_scope_stats (tenant, principal, role, project, messages, length)
SELECT m.tenant, m.principal, m.role, m.project, count(*),
       sum((SELECT coalesce(sum(cardinality(v.positions)), 0) FROM unnest(m.search_vector) v))
FROM message m
GROUP BY m.tenant, m.principal, m.role, m.project
ON CONFLICT DO NOTHING;

INSERT INTO message_term_stats (tenant, principal, lexeme, role, project, messages)
SELECT m.tenant, m.principal, v.lexeme, m.role, m.project, count(*)
FROM message m, unnest(m.search_vector) v
GROUP BY m.tenant, m.principal, v.lexeme, m.role, m.project
ON CONFLICT DO NOTHING;
