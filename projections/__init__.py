"""PostgreSQL projections of the episodic log: migrations, projectors, queries, the read API."""
