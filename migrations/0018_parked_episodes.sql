-- The parked episodes of a project, by index (issue 13, item 4: latency through the read API's
-- freshness). The watermark query (engram.shared.backlog._WATERMARK) used to read every row of
-- the project's backlog on each call — ~1.1 ms at 500 episodes, growing with the project's
-- history, and the read API's freshness and wait_for_offset poll it. It now takes each figure
-- from an index; this one serves its count of parked episodes, which are few.

CREATE INDEX formation_backlog_parked ON formation_backlog (tenant, project)
    WHERE state = 'parked';

-- Generations created before this migration (later ones copy the index with LIKE … INCLUDING
-- ALL).
DO $$
DECLARE
    target text;
BEGIN
    FOR target IN
        SELECT g.schema_name FROM generation g
        JOIN pg_namespace n ON n.nspname = g.schema_name
        WHERE g.status <> 'dropped' AND g.schema_name <> 'public'
    LOOP
        IF to_regclass(format('%I.formation_backlog', target)) IS NOT NULL THEN
            EXECUTE format('CREATE INDEX IF NOT EXISTS formation_backlog_parked '
                           'ON %I.formation_backlog (tenant, project) WHERE state = %L',
                           target, 'parked');
        END IF;
    END LOOP;
END
$$;
