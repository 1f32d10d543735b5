"""Confidence moves in the precision the store keeps it: computed in memory, it equals what a
later chunk reads back, so the digest does not depend on where a chunk ended."""

from __future__ import annotations

import struct

from engram.resolution.confidence import (
    MAX_CONFIDENCE_BY_REINFORCEMENT,
    down_weighted,
    real,
    reinforced,
)


def _as_stored(value: float) -> float:
    """What a ``real`` column gives back for ``value``."""
    stored: float = struct.unpack("f", struct.pack("f", value))[0]
    return stored


def test_a_confidence_computed_in_memory_equals_the_one_read_back() -> None:
    for value in (0.1, 0.7, 0.85, 1 / 3):
        assert real(value) == _as_stored(value)
        assert real(value) != value  # none of these is exact in single precision


def test_reinforcement_steps_up_and_never_passes_the_cap() -> None:
    stepped = reinforced(real(0.6))
    assert abs(stepped - 0.65) < 1e-6
    assert stepped == _as_stored(stepped)
    confidence = real(0.5)
    for _ in range(20):
        confidence = reinforced(confidence)
    assert confidence == real(MAX_CONFIDENCE_BY_REINFORCEMENT)


def test_an_unspecified_correction_halves_confidence_and_keeps_it_above_zero() -> None:
    assert down_weighted(real(0.8)) == real(0.4)
    assert down_weighted(real(0.8)) > 0
