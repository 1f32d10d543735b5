"""PostgreSQL projections of the episodic log, in three wings over one floor.

- :mod:`engram.projections.beliefs` — the belief projector and everything it writes.
- :mod:`engram.projections.messages` — the message index, its postings and its vectors.
- :mod:`engram.projections.reads` — what readers ask: pages, search, recall, freshness, runs.
- The floor, shared by the wings: :mod:`engram.projections.migrate` (numbered SQL migrations),
  :mod:`engram.projections.rows` (rows of dataclasses, one statement a table),
  :mod:`engram.projections.principal_lock` (a principal's transaction lock) and
  :mod:`engram.projections.following` (the one log follower every projection of a topic is a sink of:
  seeking to the offsets stored with its rows, fetching, opening each record once).
- :mod:`engram.projections.runner` runs the followers as processes or as tasks of ``engram worker``.

No wing imports another's modules except through what import-linter allows
(pyproject.toml): the beliefs wing hides a deleted belief's messages, and the reads wing reads
the messages wing; the messages wing imports neither.
"""

# One name per module (docs/development.md, "One import name"): a bare `projections` would load these
# files a second time as other modules, so a checkout with the repository root on sys.path
# refuses it here as well as in ruff (TID251).
if __name__ != "engram.projections":
    raise ImportError(f"import engram.projections, not {__name__}: Engram's modules have one name")
