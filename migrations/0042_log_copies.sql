-- `engram log encrypt` copies an episodic log into a new topic (ingest/log_encryption.py). A
-- stopped copy holds a prefix of the log, which read alone would pass for a whole log whose
-- end is missing: this row says which topic is a copy of which and whether the copy finished
-- (`finished_at`), and `engram worker` and `engram rederive` refuse to read a copy that has not
-- (ingest/log_copies.py). Topic names only: no person's name or words.

CREATE TABLE public.log_copy (
    target      text PRIMARY KEY,
    source      text NOT NULL,
    started_at  timestamptz NOT NULL DEFAULT now(),
    finished_at timestamptz,
    records     bigint NOT NULL DEFAULT 0 CHECK (records >= 0)
);
