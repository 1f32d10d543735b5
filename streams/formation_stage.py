"""The formation stage: one episode in, one claims batch out.

This is the ordinary code the faust agent calls. It runs the extractor arms (the model arm is
I/O, so this is async), then hands everything to the pure core. No SQL and no prompt text here.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from datetime import date

from formation import deterministic
from formation.core import form_episode
from formation.corrections import form_correction
from formation.merge import merge_proposals
from formation.policy import FormationPolicy
from formation.proposals import Proposal
from schemas.claims import ClaimsBatchFormed, SourcePosition
from schemas.corrections import BeliefCorrected, BeliefDeleted, PrincipalForgotten
from schemas.episodes import Message, episode_messages
from schemas.log import LogEvent

Owner = tuple[str, str]
"""(tenant, principal) of the episode a message belongs to."""
ModelArm = Callable[[Owner, Message], Awaitable[list[Proposal]]]


class FormationStage:
    def __init__(self, policy: FormationPolicy, model_arm: ModelArm | None = None):
        if policy.uses_model and model_arm is None:
            raise ValueError(f"policy {policy.version} uses a model but no model arm was given")
        self.policy = policy
        self._model_arm = model_arm

    async def form(self, episode: LogEvent, source: SourcePosition) -> ClaimsBatchFormed:
        """Propose for every message in order, then admit, gate and bound in the core; a
        correction, deletion or forgetting becomes its batch without any extractor.

        A model error propagates: a turn's later messages are never formed after an earlier
        one failed, and the caller decides whether to retry or park.
        """
        if isinstance(episode, BeliefCorrected | BeliefDeleted | PrincipalForgotten):
            return form_correction(episode, self.policy, source=source)
        proposals: dict[int, list[Proposal]] = {}
        owner = (episode.tenant, episode.principal)
        for message in episode_messages(episode):
            proposals[message.ordinal] = await self._propose(
                owner, message, episode.occurred_at.date()
            )
        return form_episode(episode, self.policy, proposals, source=source)

    async def _propose(self, owner: Owner, message: Message, occurred_on: date) -> list[Proposal]:
        """``occurred_on`` is the episode's event-time date: it grounds "last Saturday";
        ``owner`` keys the model's answers kept as receipts."""
        kind = self.policy.extractor_kind
        found = (
            deterministic.propose(
                message.content, occurred_on=occurred_on, ceiling=self.policy.scan_ceiling
            )
            if kind != "model"
            else []
        )
        if self._model_arm is not None and kind in ("model", "both"):
            found = merge_proposals(found, await self._model_arm(owner, message))
        return found
