-- engram: each generation
-- engram: replaces sha256 7ef064909e64e7eaae7954d170de0dd5b9bb4addddbb39dfcbbb1208ad84b13e
-- (the same DDL, written out for public and as a loop over the generations; migrations/README.md)
--
-- The parked episodes of a project, by index (issue 13, item 4: latency through the read API's
-- freshness). The watermark query (engram.shared.backlog._WATERMARK) used to read every row of
-- the project's backlog on each call — ~1.1 ms at 500 episodes, growing with the project's
-- history, and the read API's freshness and wait_for_offset poll it. It now takes each figure
-- from an index; this one serves its count of parked episodes, which are few.
--
-- Run in public and in every generation schema (the first line): generations created before
-- this migration get the index here, later ones copy it with LIKE … INCLUDING ALL.

CREATE INDEX IF NOT EXISTS formation_backlog_parked ON formation_backlog (tenant, project)
    WHERE state = 'parked';
