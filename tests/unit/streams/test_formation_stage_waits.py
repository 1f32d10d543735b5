"""Only a stage with a model arm may suspend, so only its attempts are put under the budget."""

from __future__ import annotations

from engram.formation.policy import FormationPolicy
from engram.formation.proposals import Proposal
from engram.schemas.claims import SourcePosition
from engram.schemas.episodes import Message
from engram.streams.formation_stage import Episode, FormationStage


async def _no_proposals(
    _episode: Episode, _source: SourcePosition, _message: Message
) -> list[Proposal]:
    return []


def test_the_deterministic_stage_never_waits() -> None:
    assert FormationStage(FormationPolicy()).waits is False


def test_a_stage_with_a_model_arm_waits() -> None:
    policy = FormationPolicy(extractor_kind="both")
    assert FormationStage(policy, _no_proposals).waits is True
