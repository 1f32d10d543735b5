"""Evaluating formation: a labeled corpus (loading cases, scoring arms), labeling sheets from real
turns, the coverage of known facts, and the commands."""

# One name per module (docs/development.md, "One import name"): a bare `evaluation` would load these
# files a second time as other modules, so a checkout with the repository root on sys.path
# refuses it here as well as in ruff (TID251).
if __name__ != "engram.evaluation":
    raise ImportError(f"import engram.evaluation, not {__name__}: Engram's modules have one name")
