"""Getting episodes into the log: topic setup, an idempotent producer, validation at the door."""
