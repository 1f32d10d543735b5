-- Evidence is unique per belief, episode, message and project (issue 25, item 3: identities
-- scoped by tenant). A producer chooses an episode's event id, and it is unique only within its
-- tenant: formation now names every identity derived from an episode after its tenant,
-- principal and project as well as its event id. A belief is already one principal's, so its
-- evidence could only meet another episode's under the same event id in another project of the
-- same principal; until now the second was refused by this key (and skipped). The evidence id
-- names the project too (formation/resolution.py), and the key follows it.

-- The live tables and every generation created before this migration (later ones copy the new
-- key with LIKE … INCLUDING ALL). The old key is found by its columns, whatever its name.
DO $$
DECLARE
    target text;
    old_key text;
BEGIN
    FOR target IN
        SELECT 'public'
        UNION ALL
        SELECT g.schema_name FROM generation g
        JOIN pg_namespace n ON n.nspname = g.schema_name
        WHERE g.status <> 'dropped' AND g.schema_name <> 'public'
    LOOP
        IF to_regclass(format('%I.evidence', target)) IS NOT NULL THEN
            FOR old_key IN
                SELECT c.conname FROM pg_constraint c
                WHERE c.conrelid = format('%I.evidence', target)::regclass AND c.contype = 'u'
                  AND c.conkey = ARRAY(
                      SELECT a.attnum FROM unnest(ARRAY['belief_id', 'episode_id',
                                                        'message_ordinal']) WITH ORDINALITY
                             AS k(name, position)
                      JOIN pg_attribute a ON a.attname = k.name
                       AND a.attrelid = format('%I.evidence', target)::regclass
                      ORDER BY k.position)::smallint[]
            LOOP
                EXECUTE format('ALTER TABLE %I.evidence DROP CONSTRAINT %I', target, old_key);
            END LOOP;
            EXECUTE format('ALTER TABLE %I.evidence ADD CONSTRAINT evidence_belief_episode_project_key '
                           'UNIQUE (belief_id, episode_id, message_ordinal, project)', target);
        END IF;
    END LOOP;
END
$$;
