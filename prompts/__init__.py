"""Model prompts as YAML data, shipped with the package; their bytes are part of the policy."""

# One name per module (docs/development.md, "One import name"): a bare `prompts` would load these
# files a second time as other modules, so a checkout with the repository root on sys.path
# refuses it here as well as in ruff (TID251).
if __name__ != "engram.prompts":
    raise ImportError(f"import engram.prompts, not {__name__}: Engram's modules have one name")
