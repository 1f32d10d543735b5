"""How resolution moves a belief's confidence, in the precision the store keeps it.

Confidence is stored as PostgreSQL's ``real`` (single precision). Every value resolution
computes goes through :func:`real`, so a value computed in memory equals the one read back: a
replay gives the same digest whatever the chunk boundaries.
"""

from __future__ import annotations

import struct

REINFORCE_STEP = 0.05
MAX_CONFIDENCE_BY_REINFORCEMENT = 0.95
UNSPECIFIED_WEIGHT = 0.5
"""An ``unspecified`` correction multiplies confidence by this: down-weighted, never retired."""


def real(value: float) -> float:
    """``value`` as PostgreSQL's ``real`` stores it, so a confidence computed in memory equals
    one read back: the same replay gives the same digest whatever the chunk boundaries."""
    rounded: float = struct.unpack("f", struct.pack("f", value))[0]
    return rounded


def reinforced(confidence: float) -> float:
    """Confidence after one more independent corroboration: a step up, capped below certainty
    (repetition alone never makes a belief certain)."""
    return real(min(MAX_CONFIDENCE_BY_REINFORCEMENT, confidence + REINFORCE_STEP))


def down_weighted(confidence: float) -> float:
    """Confidence after an ``unspecified`` correction: halved, so the belief ranks lower but
    stays (the principal did not say what is wrong with it)."""
    return real(confidence * UNSPECIFIED_WEIGHT)
