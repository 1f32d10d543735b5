"""The reads wing: what readers ask of the projections — beliefs a page at a time, search,
recall, refusals, runs, diagnosis, freshness, the user model. It writes nothing."""
