-- Full-text search over beliefs (issue 14, `GET /v1/search`): a stored tsvector of what a
-- belief says, computed by PostgreSQL from the row itself, so every writer (the projector's
-- COPY, a correction's update, a generation's copy of the table) keeps it right without code.
-- Weights: the rendered statement A; the object and facet B; the subject C; the relation D —
-- ts_rank_cd ranks a word in the statement above the same word only in the subject.
-- The 'english' configuration stems ("lives" finds "live") and drops stop words; it is named
-- explicitly, so the column does not depend on the server's default_text_search_config.
-- The GIN index serves a principal with many beliefs; for a small one the planner reads the
-- principal's rows through belief_principal_current and filters.

ALTER TABLE belief ADD COLUMN search_vector tsvector GENERATED ALWAYS AS (
    setweight(to_tsvector('english', statement), 'A')
    || setweight(to_tsvector('english', object_text), 'B')
    || setweight(to_tsvector('english', facet), 'B')
    || setweight(to_tsvector('english', replace(subject_key, ':', ' ')), 'C')
    || setweight(to_tsvector('english', replace(relation, '_', ' ')), 'D')
) STORED;

CREATE INDEX belief_search ON belief USING gin (search_vector);

-- Generation schemas copy `public.belief` with LIKE … INCLUDING ALL when they are created, so
-- a generation created from now on has the column and the index already; one created before
-- this migration gets them here.
DO $$
DECLARE
    generation_schema text;
BEGIN
    FOR generation_schema IN
        SELECT schema_name FROM generation
        WHERE schema_name <> 'public' AND status <> 'dropped'
          AND to_regclass(format('%I.belief', schema_name)) IS NOT NULL
        ORDER BY schema_name
    LOOP
        EXECUTE format(
            'ALTER TABLE %I.belief ADD COLUMN IF NOT EXISTS search_vector tsvector '
            'GENERATED ALWAYS AS ('
            'setweight(to_tsvector(''english'', statement), ''A'') '
            '|| setweight(to_tsvector(''english'', object_text), ''B'') '
            '|| setweight(to_tsvector(''english'', facet), ''B'') '
            '|| setweight(to_tsvector(''english'', replace(subject_key, '':'', '' '')), ''C'') '
            '|| setweight(to_tsvector(''english'', replace(relation, ''_'', '' '')), ''D'')'
            ') STORED',
            generation_schema
        );
        EXECUTE format(
            'CREATE INDEX IF NOT EXISTS belief_search ON %I.belief USING gin (search_vector)',
            generation_schema
        );
    END LOOP;
END
$$;
