"""Building the formation stage from settings: the policy in force and its extractor arms."""

from __future__ import annotations

import time

from engram.shared.metrics import MODEL_LATENCY
from engram.shared.settings import Settings
from formation.policy import ExtractorKind, FormationPolicy
from formation.proposals import Proposal
from schemas.episodes import Message
from streams.formation_stage import FormationStage, ModelArm


def build_policy(
    settings: Settings,
    *,
    prompt_digest: str | None = None,
    model_identity: tuple[str, str] | None = None,
    extractor_kind: ExtractorKind | None = None,
) -> FormationPolicy:
    """The policy is everything that can change what forms; credentials never enter it."""
    name, origin = model_identity if model_identity else (None, None)
    return FormationPolicy(
        extractor_kind=extractor_kind or settings.formation.extractor,
        prompt_digest=prompt_digest,
        model_name=name,
        model_origin=origin,
    )


def build_stage(settings: Settings) -> FormationStage:
    if settings.formation.extractor == "deterministic":
        return FormationStage(build_policy(settings))
    from streams.model_extractor import build_model_extractor

    extractor = build_model_extractor(settings)
    policy = build_policy(
        settings, prompt_digest=extractor.prompt_digest, model_identity=extractor.identity
    )
    return FormationStage(policy, timed(extractor.propose))


def timed(arm: ModelArm) -> ModelArm:
    """The model arm, with each call's latency observed in the model latency histogram."""

    async def propose(message: Message) -> list[Proposal]:
        started = time.perf_counter()
        try:
            return await arm(message)
        finally:
            MODEL_LATENCY.observe(time.perf_counter() - started)

    return propose
