-- engram: each generation
-- engram: replaces sha256 8d4a6c7c8523476765a37a5d7c69967675a2d37ae55384c504b2ea868e5464c3
-- (the same DDL as a loop over the schemas in PL/pgSQL; migrations/README.md)
--
-- Evidence is unique per belief, episode, message and project (issue 25, item 3: identities
-- scoped by tenant). A producer chooses an episode's event id, and it is unique only within its
-- tenant: formation now names every identity derived from an episode after its tenant,
-- principal and project as well as its event id. A belief is already one principal's, so its
-- evidence could only meet another episode's under the same event id in another project of the
-- same principal; until now the second was refused by this key (and skipped). The evidence id
-- names the project too (formation/resolution.py), and the key follows it.
--
-- Run in public and in every generation schema (the first line); later generations copy the
-- new key with LIKE … INCLUDING ALL. The old key is found by its columns, whatever its name
-- (``evidence`` resolves in the schema being migrated: search_path is that schema alone).

DO $$
DECLARE
    old_key text;
BEGIN
    FOR old_key IN
        SELECT c.conname FROM pg_constraint c
        WHERE c.conrelid = 'evidence'::regclass AND c.contype = 'u'
          AND c.conkey = ARRAY(
              SELECT a.attnum FROM unnest(ARRAY['belief_id', 'episode_id', 'message_ordinal'])
                     WITH ORDINALITY AS k(name, position)
              JOIN pg_attribute a ON a.attname = k.name AND a.attrelid = 'evidence'::regclass
              ORDER BY k.position)::smallint[]
    LOOP
        EXECUTE format('ALTER TABLE evidence DROP CONSTRAINT %I', old_key);
    END LOOP;
END
$$;

ALTER TABLE evidence ADD CONSTRAINT evidence_belief_episode_project_key
    UNIQUE (belief_id, episode_id, message_ordinal, project);
