-- engram: each generation
-- A word misspelt in a question has no posting ("restuarant"); recall then looks for the
-- principal's nearest lexeme by trigram similarity (issue 37, item 5:
-- projections/messages/lexical.py, `nearest_lexemes`). The lexemes a principal's messages hold
-- are the rows of `message_term_stats` (migration 0027); a trigram index on them finds the
-- near ones without reading the principal's vocabulary.
--
-- `pg_trgm` ships with postgresql-contrib and is a trusted extension (PostgreSQL 13+), like
-- `unaccent` (migration 0020). Where it cannot be installed the index is not made, a NOTICE says
-- so, and recall reads questions as before, without the fallback for misspelt words.

DO $$
BEGIN
    BEGIN
        CREATE EXTENSION IF NOT EXISTS pg_trgm SCHEMA public;
    EXCEPTION WHEN insufficient_privilege OR undefined_file OR feature_not_supported
                   OR object_not_in_prerequisite_state THEN
        RAISE NOTICE 'pg_trgm is not available (%); misspelt words find nothing', SQLERRM;
    END;
    IF EXISTS (SELECT 1 FROM pg_opclass WHERE opcname = 'gin_trgm_ops') THEN
        EXECUTE 'CREATE INDEX IF NOT EXISTS message_term_stats_trigrams '
                'ON message_term_stats USING gin (lexeme public.gin_trgm_ops)';
    END IF;
END
$$;
