"""Sealing and opening the log's events: encryption of a person's words on the topics."""
