"""The formation stage: one episode in, one claims batch out.

This is the ordinary code the faust agent calls. It runs the extractor arms (the model arm is
I/O, so this is async), then hands everything to the pure core. No SQL and no prompt text here.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from datetime import date
from typing import Any, TypeVar

from engram.formation import deterministic
from engram.formation.core import form_episode
from engram.formation.corrections import form_correction
from engram.formation.merge import merge_proposals
from engram.formation.policy import FormationPolicy
from engram.formation.proposals import Proposal
from engram.infra.errors import EngramFailure
from engram.schemas.claims import ClaimsBatchFormed, SourcePosition
from engram.schemas.corrections import BeliefCorrected, BeliefDeleted, PrincipalForgotten
from engram.schemas.episodes import MemoryRemembered, Message, TurnAppended, episode_messages
from engram.schemas.log import OpenEvent

Episode = TurnAppended | MemoryRemembered
T = TypeVar("T")
ModelArm = Callable[[Episode, SourcePosition, Message], Awaitable[list[Proposal]]]
"""The model arm asks about one message of an episode at its log position: the episode names
the owner and session and carries the event time; the position orders the session's context."""


class CoreFailure(EngramFailure):
    """The pure formation core raised on an episode: a bug met by this content, not an outage.

    It fails the same way on every attempt, so it is not retried with back-off like a model
    timeout (which would hold the project's lane for minutes): the episode is parked at once
    with the kind ``core_error`` (``engram formation parked``; unpark it once the core is
    fixed), and the project's later episodes go on forming."""

    code = "core_failure"

    kind = "core_error"

    def __init__(self, error: Exception) -> None:
        super().__init__(f"the formation core failed: {type(error).__name__}")
        self.error_type = type(error).__name__


class FormationStage:
    def __init__(self, policy: FormationPolicy, model_arm: ModelArm | None = None):
        if policy.uses_model and model_arm is None:
            raise ValueError(f"policy {policy.version} uses a model but no model arm was given")
        self.policy = policy
        self._model_arm = model_arm

    @property
    def waits(self) -> bool:
        """Whether forming may suspend on I/O: only a model arm does; the deterministic arm and
        the core are CPU alone, so a timer around them could never fire."""
        return self._model_arm is not None

    async def form(self, episode: OpenEvent, source: SourcePosition) -> ClaimsBatchFormed:
        """Propose for every message in order, then admit, gate and bound in the core; a
        correction, deletion or forgetting becomes its batch without any extractor.

        A model error propagates: a turn's later messages are never formed after an earlier
        one failed, and the caller decides whether to retry or park.
        """
        if isinstance(episode, BeliefCorrected | BeliefDeleted | PrincipalForgotten):
            return _in_core(form_correction, episode, self.policy, source=source)
        proposals: dict[int, list[Proposal]] = {}
        for message in episode_messages(episode):
            proposals[message.ordinal] = await self._propose(episode, source, message)
        return _in_core(form_episode, episode, self.policy, proposals, source=source)

    async def _propose(
        self, episode: Episode, source: SourcePosition, message: Message
    ) -> list[Proposal]:
        """The episode's event-time date grounds "last Saturday"; the model arm also gets the
        episode and its position, for the session's context and the answers kept as receipts."""
        kind = self.policy.extractor_kind
        occurred_on: date = episode.occurred_at.date()
        found = (
            _in_core(
                deterministic.propose,
                message.content,
                occurred_on=occurred_on,
                ceiling=self.policy.scan_ceiling,
            )
            if kind != "model"
            else []
        )
        if self._model_arm is not None and kind in ("model", "both"):
            modelled = await self._model_arm(episode, source, message)
            found = _in_core(merge_proposals, found, modelled)
        return found


def _in_core(call: Callable[..., T], /, *args: Any, **kwargs: Any) -> T:
    """``call(*args, **kwargs)``, a function of the pure core, whose exceptions are bugs met by
    this content: raised as :class:`CoreFailure`, never retried."""
    try:
        return call(*args, **kwargs)
    except Exception as error:
        raise CoreFailure(error) from error
