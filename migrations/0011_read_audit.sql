-- The read and audit API (issue 14, item 4): the backlog learns whose episode each entry is
-- (the SHA-256 of tenant/principal, as a principal tombstone holds it, and the session: metadata
-- only), so a session's diagnosis can show the attempts and parking of episodes that never
-- formed; and indexes for the paged reads, so a page costs the same on the millionth belief as
-- on the first. The hash, not the name: episodes of a forgotten principal still reach the
-- backlog, and nothing there may name them.
--
-- Generation schemas copy the public tables when they are created (LIKE … INCLUDING ALL), so a
-- generation created before this migration gets the same columns and indexes here.

DO $$
DECLARE
    target text;
BEGIN
    FOR target IN
        SELECT g.schema_name FROM generation g
        JOIN pg_namespace n ON n.nspname = g.schema_name
        WHERE g.status <> 'dropped'
        UNION SELECT 'public'
    LOOP
        EXECUTE format('ALTER TABLE %I.formation_backlog ADD COLUMN IF NOT EXISTS principal_hash text', target);
        EXECUTE format('ALTER TABLE %I.formation_backlog ADD COLUMN IF NOT EXISTS session text', target);
        -- A session's episodes, formed or not.
        EXECUTE format('CREATE INDEX IF NOT EXISTS formation_backlog_session ON %I.formation_backlog '
                       '(tenant, principal_hash, session) WHERE principal_hash IS NOT NULL', target);
        -- Belief pages in their order (valid_from, belief_id); current beliefs on their own.
        EXECUTE format('CREATE INDEX IF NOT EXISTS belief_page ON %I.belief '
                       '(tenant, principal, valid_from, belief_id)', target);
        EXECUTE format('CREATE INDEX IF NOT EXISTS belief_page_current ON %I.belief '
                       '(tenant, principal, valid_from, belief_id) '
                       'WHERE status IN (''active'', ''provisional'')', target);
        -- A session's runs, and a run's refusals.
        EXECUTE format('CREATE INDEX IF NOT EXISTS consolidation_run_session ON %I.consolidation_run '
                       '(tenant, principal, session)', target);
        EXECUTE format('CREATE INDEX IF NOT EXISTS refusal_run ON %I.refusal (run_id)', target);
    END LOOP;
END
$$;
