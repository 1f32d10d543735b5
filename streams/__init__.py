"""Stream processing: the faust app, its topics and agents, and the pure formation core."""

# One name per module (docs/development.md, "One import name"): a bare `streams` would load these
# files a second time as other modules, so a checkout with the repository root on sys.path
# refuses it here as well as in ruff (TID251).
if __name__ != "engram.streams":
    raise ImportError(f"import engram.streams, not {__name__}: Engram's modules have one name")
