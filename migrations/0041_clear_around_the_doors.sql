-- engram: each generation
-- Why an erased person's words are in clear on the episodic log. A receipt said every episode in
-- clear "was appended while the log was not encrypted"; but a producer writing straight to the
-- topic, around Engram's doors (which seal every episode while ENGRAM_KEYS_ENCRYPT_LOG is on),
-- appends in clear while the log is encrypted. The log tells the two apart: an episode in clear
-- at a higher offset than a sealed one of the same partition was appended after the log was
-- sealed. The projector counts those apart (the formation backlog holds each episode's position
-- and how it held words), so the receipt names the real cause.

ALTER TABLE erasure_receipt ADD COLUMN IF NOT EXISTS episodes_in_clear_after_sealed integer
    NOT NULL DEFAULT 0 CHECK (episodes_in_clear_after_sealed >= 0);
