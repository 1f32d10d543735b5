"""The model arm as the formation stage runs it: context, receipt, attempts, fallback.

For one message of an episode it keeps the message (redacted) in its session, reads the
session's context window before it, and answers from a receipt when the model already answered
this exact input. A message none of whose claims could be kept (an untrusted or system
message: :mod:`formation.formable`) is kept as context but never asked about: the skip is
counted by the refusal every claim would meet (``engram_model_skipped_total``). Otherwise it
asks the model with bounded retries, recording every attempt without content, and keeps the
answer. When every attempt failed, a ``both`` policy falls back:
the message forms from the deterministic arm's proposals alone, and a ``fallback`` row says so
and why — nothing is lost and nothing is silent. A ``model`` policy has nothing to fall back
to, so the failure goes to the worker, which retries the episode and parks it.
"""

from __future__ import annotations

import time

import structlog

from engram.formation.formable import nothing_can_form
from engram.formation.policy import FormationPolicy
from engram.formation.proposals import Proposal
from engram.infra.metrics import (
    MODEL_ATTEMPTS,
    MODEL_FALLBACKS,
    MODEL_LATENCY,
    MODEL_RECEIPTS,
    MODEL_SKIPPED,
)
from engram.schemas.claims import SourcePosition
from engram.schemas.episodes import Message
from engram.streams.formation_stage import Episode, ModelArm
from engram.streams.model.attempts import (
    Attempt,
    AttemptsExhausted,
    RetrySchedule,
    ask_with_retries,
)
from engram.streams.model.context import ContextMessage, context_text, context_window
from engram.streams.model.extractor import ModelExtractor
from engram.streams.model.receipts import AttemptPlace, ReceiptKey, ReceiptStore, SessionPlace

log = structlog.get_logger(__name__)


def model_arm(
    extractor: ModelExtractor,
    store: ReceiptStore,
    policy: FormationPolicy,
    schedule: RetrySchedule,
) -> ModelArm:
    """The arm for ``policy``: its context bounds, and a fallback when it is ``both``."""
    name, origin = extractor.identity
    request = extractor.request_digest

    async def window_for(place: SessionPlace, message: Message) -> tuple[ContextMessage, ...]:
        if policy.context_messages == 0:
            return ()
        kept = ContextMessage(message.role, context_text(message.content))
        earlier = await store.remember_and_read(place, kept, policy.context_messages)
        return context_window(
            earlier, max_messages=policy.context_messages, max_chars=policy.context_chars
        )

    async def propose(episode: Episode, source: SourcePosition, message: Message) -> list[Proposal]:
        owner = (episode.tenant, episode.principal)
        place = SessionPlace(*owner, episode.project, episode.session, source, message.ordinal)
        window = await window_for(place, message)  # kept as context even when not asked
        cannot = nothing_can_form(message)
        if cannot is not None:
            MODEL_SKIPPED.labels(cannot.value).inc()
            return []
        occurred_on = episode.occurred_at.date()
        key: ReceiptKey = (
            *owner,
            name,
            origin,
            request,
            extractor.input_digest(message, window, occurred_on),
        )
        found = await store.find(key)
        if found is not None:
            MODEL_RECEIPTS.labels("hit").inc()
            return found
        MODEL_RECEIPTS.labels("miss").inc()
        audit = AttemptPlace(*owner, episode.event_id, message.ordinal, policy.version, key)

        async def record(attempt: Attempt) -> None:
            MODEL_ATTEMPTS.labels(attempt.status, attempt.failure or "").inc()
            if attempt.latency_s is not None:
                MODEL_LATENCY.observe(attempt.latency_s)
            await store.record_attempt(audit, attempt)

        started = time.perf_counter()
        try:
            answer = await ask_with_retries(
                lambda: extractor.answer(message, window, occurred_on),
                schedule=schedule,
                record=record,
            )
        except AttemptsExhausted as exhausted:
            if policy.extractor_kind != "both":
                raise
            await _fall_back(store, audit, exhausted, episode, message)
            return []
        await store.keep(key, answer.proposals, time.perf_counter() - started)
        return answer.proposals

    return propose


async def _fall_back(
    store: ReceiptStore,
    audit: AttemptPlace,
    exhausted: AttemptsExhausted,
    episode: Episode,
    message: Message,
) -> None:
    """Record that this message formed without the model, and why; count it; say it."""
    fallback = Attempt(
        number=exhausted.attempts,
        status="fallback",
        failure=exhausted.kind,
        http_status=exhausted.error.status,
    )
    await store.record_attempt(audit, fallback)
    MODEL_FALLBACKS.labels(exhausted.kind).inc()
    log.warning(
        "formation.model_fallback",
        episode=str(episode.event_id),
        message_ordinal=message.ordinal,
        attempts=exhausted.attempts,
        failure=exhausted.kind,
        http_status=exhausted.error.status,
    )
