-- How old each key-encryption key (KEK) is, so `engram keys check` can tell an operator (a
-- forget reaches a database backup only once the KEK that wrapped the keys in it is rotated away
-- and destroyed: docs/privacy.md, "Backups that die with their keys"). Nothing stored said when
-- a KEK came into use; its canary is written the first time a process runs with it, so that
-- moment is recorded beside the canary from now on. A KEK in use before this migration is
-- dated by the migration itself: it is at least that old, and `engram keys check` says so.

ALTER TABLE kek_canary ADD COLUMN IF NOT EXISTS first_seen_at timestamptz NOT NULL DEFAULT now();
ALTER TABLE kek_canary ADD COLUMN IF NOT EXISTS seen_before_recorded boolean NOT NULL DEFAULT false;
UPDATE kek_canary SET seen_before_recorded = true;
