"""The policy in force: the one place that decides what a process forms under.

The policy file ``ENGRAM_FORMATION_POLICY_FILE`` names (or one given explicitly), else the
defaults with the extractor kind and model of the settings; either way under this build's
behaviour digest and, when a model is used, the prompt's. Below the stages, so the worker, the
CLI's commands, corrections and the read side learn it the same way without importing a stage.
A generation pins the policy it was built under (:mod:`generations.registry`); readers of a
generation use that one (:func:`generations.reading.serving_policy`).
"""

from __future__ import annotations

from dataclasses import replace
from functools import lru_cache
from pathlib import Path

from engram.formation.policy import FormationPolicy
from engram.infra.settings import Settings
from engram.policies.behaviour import committed_behaviour_digest
from engram.policies.document import PolicyDocument, load_policy_file, parse_policy
from engram.policies.endpoint import ModelConfigurationError, endpoint_origin
from engram.policies.prompt import load_extraction_prompt


def default_policy() -> FormationPolicy:
    """The deterministic policy with every default, under this build's behaviour digest."""
    return PolicyDocument().policy(
        behaviour_digest=committed_behaviour_digest(), prompt_digest=None
    )


def settings_document(settings: Settings) -> PolicyDocument:
    """The policy file the settings amount to: their extractor kind and model, else defaults."""
    kind = settings.formation.extractor
    if kind == "deterministic":
        return PolicyDocument()
    if not settings.model.endpoint or not settings.model.name:
        raise ModelConfigurationError(
            f"extractor {kind} needs ENGRAM_MODEL_ENDPOINT and ENGRAM_MODEL_NAME"
        )
    model = {"name": settings.model.name, "origin": endpoint_origin(settings.model.endpoint)}
    context = {
        "messages": settings.model.context_messages,
        "chars": settings.model.context_chars,
    }
    return PolicyDocument.model_validate(
        {"extractor": {"kind": kind}, "model": model, "context": context}
    )


def effective_policy(settings: Settings, policy_file: Path | None = None) -> FormationPolicy:
    """The policy a worker with these settings forms under, found without any connection.

    ``policy_file`` overrides ``ENGRAM_FORMATION_POLICY_FILE``. The prompt is read (and
    checked) only when the policy uses a model: a prompt decides nothing otherwise.
    """
    path = policy_file or settings.formation.policy_file
    document = load_policy_file(path) if path else settings_document(settings)
    prompt = load_extraction_prompt(settings.formation.prompt_path) if document.uses_model else None
    return document.policy(
        behaviour_digest=committed_behaviour_digest(),
        prompt_digest=prompt.digest if prompt else None,
    )


def model_policy(settings: Settings) -> FormationPolicy:
    """The policy a ``model`` worker with these settings would form under: the policy file's
    (whose kind must use a model) or the settings' model, with the kind set to ``model``. What
    ``engram eval formation --record`` binds its evidence to."""
    path = settings.formation.policy_file
    if path:
        document = load_policy_file(path)
        if not document.uses_model:
            raise ModelConfigurationError(f"policy file {path} runs no model to evaluate")
    else:
        forced = settings.formation.model_copy(update={"extractor": "model"})
        document = settings_document(
            Settings(model=settings.model, formation=forced, database=settings.database)
        )
    prompt = load_extraction_prompt(settings.formation.prompt_path)
    policy = document.policy(
        behaviour_digest=committed_behaviour_digest(), prompt_digest=prompt.digest
    )
    return replace(policy, extractor_kind="model")


@lru_cache(maxsize=16)
def pinned_policy(policy_yaml: str | None, *, generation: str = "a generation") -> FormationPolicy:
    """The policy a generation pinned (its ``policy_yaml`` in the registry), under this build's
    behaviour digest; the defaults for a generation no worker has pinned yet. What its readers
    decay by and what corrections for its principals are checked under: parsed once per text."""
    if policy_yaml is None:
        return default_policy()
    document = parse_policy(policy_yaml.encode(), source=f"the policy of {generation}")
    return document.policy(behaviour_digest=committed_behaviour_digest(), prompt_digest=None)
