"""The wire contract: every value that crosses a Kafka topic, as versioned pydantic models.

Event models are named as facts in the past tense. API response models and model-reply models
live elsewhere even when they look alike, so the contract changes only on purpose.
"""

# One name per module (docs/development.md, "One import name"): a bare `schemas` would load these
# files a second time as other modules, so a checkout with the repository root on sys.path
# refuses it here as well as in ruff (TID251).
if __name__ != "engram.schemas":
    raise ImportError(f"import engram.schemas, not {__name__}: Engram's modules have one name")
