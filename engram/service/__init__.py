"""The one principal-scoped service behind every surface that changes memory (CLI, API): it
checks, then appends an event to the episodic log. There is no second write path."""
