-- Search reads questions, not boolean queries (issue 28, item 1): "cafe" must find "café".
-- A text search configuration of our own, `engram_english`: PostgreSQL's english (same parser,
-- stemmer and stop words) with the `unaccent` filter in front of the stemmer for words with
-- letters outside ASCII, so "café" and "cafe" are both the lexeme 'cafe'. The belief search
-- vector (migration 0012) is rebuilt with it, in the live tables and in every generation built
-- before this migration; a generation built later copies the column and index with LIKE …
-- INCLUDING ALL, and the generated expression names the configuration by OID, so it searches
-- the same way.
--
-- `unaccent` ships with postgresql-contrib and is a trusted extension (PostgreSQL 13+): a role
-- with CREATE on the database may install it. Where it cannot be installed (not shipped, no
-- privilege) the configuration is plain english, a NOTICE says so, and search is as before but
-- accent-sensitive; installing the extension later and re-creating the mapping restores it.

DO $$
DECLARE
    unaccent_schema name;
BEGIN
    BEGIN
        CREATE EXTENSION IF NOT EXISTS unaccent;
    EXCEPTION WHEN insufficient_privilege OR undefined_file OR feature_not_supported
                   OR object_not_in_prerequisite_state THEN
        RAISE NOTICE 'unaccent is not available (%); search stays accent-sensitive', SQLERRM;
    END;
    IF to_regnamespace('public') IS NULL THEN
        RAISE EXCEPTION 'schema public is missing';
    END IF;
    IF NOT EXISTS (SELECT 1 FROM pg_ts_config
                   WHERE cfgname = 'engram_english' AND cfgnamespace = 'public'::regnamespace) THEN
        CREATE TEXT SEARCH CONFIGURATION public.engram_english (COPY = pg_catalog.english);
    END IF;
    SELECT n.nspname INTO unaccent_schema
    FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace
    WHERE e.extname = 'unaccent';
    IF unaccent_schema IS NOT NULL THEN
        EXECUTE format('ALTER TEXT SEARCH CONFIGURATION public.engram_english '
                       'ALTER MAPPING FOR word, hword, hword_part WITH %I.unaccent, '
                       'pg_catalog.english_stem', unaccent_schema);
    END IF;
END
$$;

-- The column cannot change its expression in place (PostgreSQL 15): it is dropped, with its
-- index, and added again; every row's vector is computed anew.
DO $$
DECLARE
    target text;
BEGIN
    FOR target IN
        SELECT 'public'
        UNION ALL
        SELECT g.schema_name FROM generation g
        JOIN pg_namespace n ON n.nspname = g.schema_name
        WHERE g.status <> 'dropped' AND g.schema_name <> 'public'
        ORDER BY 1
    LOOP
        IF to_regclass(format('%I.belief', target)) IS NOT NULL THEN
            EXECUTE format('ALTER TABLE %I.belief DROP COLUMN IF EXISTS search_vector', target);
            EXECUTE format(
                'ALTER TABLE %I.belief ADD COLUMN search_vector tsvector GENERATED ALWAYS AS ('
                'setweight(to_tsvector(''public.engram_english'', statement), ''A'') '
                '|| setweight(to_tsvector(''public.engram_english'', object_text), ''B'') '
                '|| setweight(to_tsvector(''public.engram_english'', facet), ''B'') '
                '|| setweight(to_tsvector(''public.engram_english'', '
                'replace(subject_key, '':'', '' '')), ''C'') '
                '|| setweight(to_tsvector(''public.engram_english'', '
                'replace(relation, ''_'', '' '')), ''D'')'
                ') STORED',
                target
            );
            EXECUTE format('CREATE INDEX IF NOT EXISTS belief_search ON %I.belief '
                           'USING gin (search_vector)', target);
        END IF;
    END LOOP;
END
$$;
