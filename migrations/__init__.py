"""Numbered SQL migrations, shipped as package data and applied in order by ``engram migrate``."""

# One name per module (docs/development.md, "One import name"): a bare `migrations` would load these
# files a second time as other modules, so a checkout with the repository root on sys.path
# refuses it here as well as in ruff (TID251).
if __name__ != "engram.migrations":
    raise ImportError(f"import engram.migrations, not {__name__}: Engram's modules have one name")
