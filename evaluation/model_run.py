"""Forming turns with the model arm in process, as a worker forms them.

Every message of every episode, in log order: the deterministic arm's proposals (unless the
policy is ``model``), the model's (unless nothing of the message could be kept:
:func:`formation.formable.nothing_can_form`, the worker's rule), merged as the formation stage
merges them, then admitted, gated and bounded by the core. The model sees what a worker's
model sees: the message redacted with the policy's PII kinds, the session's earlier messages
as its context window (redacted, bounded by the policy) and the episode's date.

The model is a function (:data:`MessageModel`): a real endpoint's extractor
(:meth:`engram.streams.model.extractor.ModelExtractor.propose`) or recorded answers read in process
(:func:`replayed`). The counts of a run say what the model was asked and what it was spared.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass, field
from datetime import date

from engram.evaluation.answers import RecordedAnswers
from engram.evaluation.scoring import EpisodeArm
from engram.formation import deterministic
from engram.formation.core import form_episode
from engram.formation.formable import nothing_can_form
from engram.formation.gates import redact
from engram.formation.merge import merge_proposals
from engram.formation.policy import FormationPolicy
from engram.formation.proposals import Proposal
from engram.schemas.claims import ClaimsBatchFormed, SourcePosition
from engram.schemas.episodes import MemoryRemembered, Message, TurnAppended, episode_messages
from engram.streams.model.context import ContextMessage, context_text, context_window
from engram.streams.model.reply import decode_envelope

MessageModel = Callable[[Message, tuple[ContextMessage, ...], date], Awaitable[list[Proposal]]]
"""One message, its context window and the episode's date in; the model's proposals out."""

Episode = TurnAppended | MemoryRemembered

_TOPIC = "evaluation"


@dataclass(slots=True)
class ModelCalls:
    """What the model arm asked and what it was spared, over one run."""

    messages: int = 0
    asked: int = 0
    skipped: Counter[str] = field(default_factory=Counter)
    """Messages not asked about, by the refusal every claim of theirs would meet."""
    unanswered: int = 0
    """Asked, but the recorded answers hold nothing for them (answered as no claims)."""

    def to_dict(self) -> dict[str, object]:
        per_1000 = round(1000 * self.asked / self.messages, 1) if self.messages else 0.0
        return {
            "messages": self.messages,
            "asked": self.asked,
            "asked_per_1000_messages": per_1000,
            "skipped": dict(sorted(self.skipped.items())),
            "unanswered": self.unanswered,
        }


def replayed(answers: RecordedAnswers, policy: FormationPolicy, calls: ModelCalls) -> MessageModel:
    """Recorded answers as the model: the reply to a message's role and redacted text, decoded
    as the extractor decodes an endpoint's reply. A message the file does not answer is
    answered with no claims and counted (``unanswered``)."""
    extractor = f"model:{policy.model_name}"

    async def propose(
        message: Message, window: tuple[ContextMessage, ...], occurred_on: date
    ) -> list[Proposal]:
        text = redact(message.content, pii_kinds=policy.pii_kinds)
        reply = answers.reply(message.role.value, text)
        if reply is None:
            calls.unanswered += 1
            return []
        return decode_envelope(reply, extractor=extractor)

    return propose


async def form_with_model(
    episodes: Iterable[Episode],
    policy: FormationPolicy,
    model: MessageModel,
    calls: ModelCalls,
) -> list[ClaimsBatchFormed]:
    """One claims batch per episode, in order, each at its own log offset."""
    sessions: dict[tuple[str, str, str, str], list[ContextMessage]] = {}
    batches: list[ClaimsBatchFormed] = []
    for offset, episode in enumerate(episodes):
        occurred_on = episode.occurred_at.date()
        session = (episode.tenant, episode.principal, episode.project, episode.session)
        earlier = sessions.setdefault(session, [])
        proposals: dict[int, list[Proposal]] = {}
        for message in episode_messages(episode):
            found = (
                deterministic.propose(
                    message.content, occurred_on=occurred_on, ceiling=policy.scan_ceiling
                )
                if policy.extractor_kind != "model"
                else []
            )
            window = (
                context_window(
                    earlier, max_messages=policy.context_messages, max_chars=policy.context_chars
                )
                if policy.context_messages
                else ()
            )
            earlier.append(ContextMessage(message.role, context_text(message.content)))
            calls.messages += 1
            cannot = nothing_can_form(message)
            if cannot is not None:
                calls.skipped[cannot.value] += 1
            else:
                calls.asked += 1
                found = merge_proposals(found, await model(message, window, occurred_on))
            proposals[message.ordinal] = found
        source = SourcePosition(topic=_TOPIC, partition=0, offset=offset)
        batches.append(form_episode(episode, policy, proposals, source=source))
    return batches


def case_arm(model: MessageModel, policy: FormationPolicy, calls: ModelCalls) -> EpisodeArm:
    """The model arm over a corpus case (its earlier messages as context, its date), with the
    worker's rule: a message nothing of which can be kept is not asked about."""

    async def propose(episode: TurnAppended, message: Message) -> list[Proposal]:
        calls.messages += 1
        cannot = nothing_can_form(message)
        if cannot is not None:
            calls.skipped[cannot.value] += 1
            return []
        calls.asked += 1
        earlier = [
            ContextMessage(m.role, context_text(m.content))
            for m in episode.messages
            if m.ordinal < message.ordinal
        ]
        window = context_window(
            earlier, max_messages=policy.context_messages, max_chars=policy.context_chars
        )
        return await model(message, window, episode.occurred_at.date())

    return propose
