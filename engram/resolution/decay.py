"""Read-time decay: how much of a belief's stored confidence still holds at a given time.

Storage stays a function of the log — the projector writes the confidence the evidence earned
and the time of the last reinforcement, never a value that depends on when it ran. A reader
asks "how confident now?": the stored value halves every half-life of the belief's type since
the last reinforcement, down to the policy's floor, and a transient state (``has_status``,
``blocked_by``) past its expiry holds nothing. The half-lives, floor and expiries are the
policy's, so they change its version. Pure: the reader passes the time.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from engram.formation.policy import FormationPolicy

_DAY = timedelta(days=1)


@dataclass(frozen=True)
class Decay:
    half_lives_days: dict[str, float]
    floor: float
    transient_days: dict[str, float]

    @classmethod
    def of(cls, policy: FormationPolicy) -> Decay:
        return cls(
            dict(policy.half_lives_days), policy.confidence_floor, dict(policy.transient_days)
        )

    def effective(
        self,
        confidence: float,
        *,
        belief_type: str,
        relation: str,
        last_reinforced_at: datetime,
        now: datetime,
    ) -> float:
        """``confidence`` as it stands at ``now``; never above the stored value."""
        age_days = max((now - last_reinforced_at) / _DAY, 0.0)
        expiry = self.transient_days.get(relation)
        if expiry is not None and age_days >= expiry:
            return 0.0
        half_life = self.half_lives_days.get(belief_type)
        if half_life is None or confidence <= self.floor:
            return confidence
        decayed: float = confidence * 0.5 ** (age_days / half_life)
        return round(max(decayed, self.floor), 4)
