"""Getting episodes into the log: topic setup, an idempotent producer, validation at the door."""

# One name per module (docs/development.md, "One import name"): a bare `ingest` would load these
# files a second time as other modules, so a checkout with the repository root on sys.path
# refuses it here as well as in ruff (TID251).
if __name__ != "engram.ingest":
    raise ImportError(f"import engram.ingest, not {__name__}: Engram's modules have one name")
