"""Read-time decay: the stored confidence, halved every half-life of the belief's type since
the last reinforcement, never below the floor; a transient state past its expiry holds nothing."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import given
from hypothesis import strategies as st

from engram.formation.policy import FormationPolicy
from engram.resolution.decay import Decay

POLICY = FormationPolicy()
DECAY = Decay.of(POLICY)
THEN = datetime(2026, 1, 1, tzinfo=UTC)


def _at(
    days: float, *, confidence: float = 0.8, kind: str = "preference", relation: str = "prefers"
) -> float:
    return DECAY.effective(
        confidence,
        belief_type=kind,
        relation=relation,
        last_reinforced_at=THEN,
        now=THEN + timedelta(days=days),
    )


class TestConfidenceHalvesEveryHalfLifeOfItsType:
    def test_nothing_is_lost_at_the_moment_of_reinforcement(self) -> None:
        assert _at(0) == 0.8

    def test_one_half_life_halves_it_and_two_quarter_it(self) -> None:
        assert _at(180) == 0.4 and _at(360) == 0.2

    def test_a_relationship_fades_slower_than_a_preference(self) -> None:
        assert _at(365, kind="relationship", relation="knows") > _at(365)

    def test_it_never_falls_below_the_floor(self) -> None:
        assert _at(10_000) == POLICY.confidence_floor

    def test_a_value_already_at_or_below_the_floor_stays_as_it_is(self) -> None:
        assert _at(10_000, confidence=0.05) == 0.05

    def test_a_reading_before_the_reinforcement_sees_the_stored_value(self) -> None:
        assert _at(-5) == 0.8

    @given(st.floats(0, 1), st.floats(0, 5_000), st.floats(0, 5_000))
    def test_it_never_rises_with_time_nor_above_the_stored_value(
        self, confidence: float, earlier: float, later: float
    ) -> None:
        first, second = sorted((earlier, later))
        assert _at(second, confidence=confidence) <= _at(first, confidence=confidence) + 1e-4
        assert _at(first, confidence=confidence) <= confidence + 1e-4


class TestATransientStateExpires:
    def test_a_status_holds_until_its_expiry_then_nothing(self) -> None:
        fresh = _at(13, kind="fact", relation="has_status")
        assert 0 < fresh < 0.8
        assert _at(14, kind="fact", relation="has_status") == 0.0


class TestTheDecayIsThePolicys:
    def test_half_lives_and_floor_change_the_policy_version(self) -> None:
        faster = replace(POLICY, half_lives_days=(("preference", 30.0),))
        assert faster.version != POLICY.version
        assert replace(POLICY, confidence_floor=0.2).version != POLICY.version

    @pytest.mark.parametrize("days", [30, 30.0])
    def test_equal_half_lives_written_differently_are_one_version(self, days: float) -> None:
        a = replace(POLICY, half_lives_days=(("preference", days), ("fact", 365)))
        b = replace(POLICY, half_lives_days=(("fact", 365.0), ("preference", 30.0)))
        assert a.version == b.version
