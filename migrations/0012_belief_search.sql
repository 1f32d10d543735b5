-- engram: each generation
-- engram: replaces sha256 3544a69e64683b4863abce98fc1952416f9e91a67a6db181ad4ebb75048b898a
-- (the same DDL, written out for public and as a loop over the generations; migrations/README.md)
--
-- Full-text search over beliefs (issue 14, `GET /v1/search`): a stored tsvector of what a
-- belief says, computed by PostgreSQL from the row itself, so every writer (the projector's
-- COPY, a correction's update, a generation's copy of the table) keeps it right without code.
-- Weights: the rendered statement A; the object and facet B; the subject C; the relation D —
-- ts_rank_cd ranks a word in the statement above the same word only in the subject.
-- The 'english' configuration stems ("lives" finds "live") and drops stop words; it is named
-- explicitly, so the column does not depend on the server's default_text_search_config.
-- The GIN index serves a principal with many beliefs; for a small one the planner reads the
-- principal's rows through belief_principal_current and filters.
--
-- Run in public and in every generation schema (the first line): a generation created before
-- this migration gets the column and the index here; later ones copy `public.belief` with
-- LIKE … INCLUDING ALL.

ALTER TABLE belief ADD COLUMN IF NOT EXISTS search_vector tsvector GENERATED ALWAYS AS (
    setweight(to_tsvector('english', statement), 'A')
    || setweight(to_tsvector('english', object_text), 'B')
    || setweight(to_tsvector('english', facet), 'B')
    || setweight(to_tsvector('english', replace(subject_key, ':', ' ')), 'C')
    || setweight(to_tsvector('english', replace(relation, '_', ' ')), 'D')
) STORED;

CREATE INDEX IF NOT EXISTS belief_search ON belief USING gin (search_vector);
