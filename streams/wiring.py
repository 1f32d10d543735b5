"""Building the formation stage from settings: the policy in force and its extractor arms.

The policy in force comes from :mod:`policies.in_force` (the one place that decides it). Here
it gets its arms: a policy that uses a model is built only with passing evidence for it
(:mod:`engram.streams.model.evidence`), or under the explicit, loudly logged override.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import structlog

from engram.formation.policy import FormationPolicy
from engram.formation.vocabulary import RELATIONS
from engram.infra.errors import EngramFailure
from engram.infra.settings import Settings
from engram.policies.endpoint import endpoint_origin
from engram.policies.in_force import effective_policy
from engram.streams.formation_stage import FormationStage
from engram.streams.model.evidence import (
    ActivationRefused,
    activation_fingerprint,
    check_activation,
    default_evidence_path,
)

if TYPE_CHECKING:  # the openai client: ~1 s and ~15 MiB at start, see model_extractor_for
    from engram.streams.model.extractor import ModelExtractor

log = structlog.get_logger(__name__)


class PolicyMismatch(EngramFailure, ValueError):
    """The policy file names another model than the model settings reach."""

    code = "policy_mismatch"


def evidence_path(settings: Settings) -> Path:
    return settings.formation.evidence_path or default_evidence_path(settings.state.dir)


@dataclass(frozen=True)
class Activation:
    """Leave for a model policy to form: passing evidence was found for ``fingerprint``, or the
    override was set (``overridden``)."""

    fingerprint: str
    overridden: bool


def activate_model(policy: FormationPolicy, settings: Settings) -> Activation:
    """Check a model policy's evidence (raises :class:`ActivationRefused`), or take the
    override, which is logged as an error every time. Called with the process's own settings,
    before a generation's settings move the state directory."""
    path = evidence_path(settings)
    fingerprint = activation_fingerprint(policy)
    if settings.formation.allow_unevaluated_model:
        log.error(
            "formation.model_unevaluated",
            policy=policy.version,
            model=policy.model_name,
            evidence=str(path),
            detail="ENGRAM_FORMATION_ALLOW_UNEVALUATED_MODEL is set: the model arm runs without "
            "a passing evaluation; unset it for production",
        )
        return Activation(fingerprint, overridden=True)
    evidence = check_activation(policy, path)
    log.info(
        "formation.model_activated",
        policy=policy.version,
        evidence=str(path),
        coverage=round(evidence.model.coverage, 4),
    )
    return Activation(fingerprint, overridden=False)


def build_stage(
    settings: Settings,
    policy: FormationPolicy | None = None,
    activation: Activation | None = None,
) -> FormationStage:
    """The stage for the policy in force (``policy`` when the caller already resolved it: it
    hashes the formation source and reads the policy file), with a model arm when it uses one
    and it is activated: by ``activation`` (from :func:`activate_model`), or else checked
    here against these settings."""
    policy = policy or effective_policy(settings)
    if not policy.uses_model:
        return FormationStage(policy)
    check_model_identity(policy, settings)
    activation = activation or activate_model(policy, settings)
    if activation.fingerprint != activation_fingerprint(policy):
        raise ActivationRefused(
            f"the model arm was activated for another policy than {policy.version}"
        )
    # Lazy, as in model_extractor_for: a deterministic worker never loads the openai client.
    from engram.streams.model.arm import model_arm
    from engram.streams.model.attempts import RetrySchedule
    from engram.streams.model.receipts import ReceiptStore

    extractor = model_extractor_for(settings, policy)
    schedule = RetrySchedule(settings.model.max_attempts, settings.model.retry_after_s)
    arm = model_arm(extractor, ReceiptStore(settings.database), policy, schedule)
    return FormationStage(policy, arm)


def model_extractor_for(settings: Settings, policy: FormationPolicy) -> ModelExtractor:
    """The model extractor for the policy's relations and PII kinds, at the settings' endpoint.

    Imported here, at the one place a model is built, rather than at module level: the openai
    client costs ~1 s and ~15 MiB of RSS at start, which every ``engram`` command (the deterministic
    worker and the projector included) paid through the CLI's imports. A test holds the CLI's
    import free of it (tests/unit/test_start_up_imports.py)."""
    from engram.streams.model.extractor import build_model_extractor

    enabled = set(policy.enabled_relations)
    return build_model_extractor(
        settings,
        pii_kinds=policy.pii_kinds,
        relations=tuple(r for r in RELATIONS if r.name in enabled),
    )


def check_model_identity(policy: FormationPolicy, settings: Settings) -> None:
    """Refuse to form under a policy whose model is not the one the settings reach.

    A policy file names a model and an origin; the settings say where to send requests and how
    to authenticate. Forming with another model than the policy names would stamp its version
    on beliefs it does not describe. Missing model settings are left to the extractor's own
    error.
    """
    if not settings.model.endpoint or not settings.model.name:
        return
    reached = (settings.model.name, endpoint_origin(settings.model.endpoint))
    if reached != (policy.model_name, policy.model_origin):
        raise PolicyMismatch(
            f"the policy names model {policy.model_name} at {policy.model_origin}, but "
            f"ENGRAM_MODEL_NAME and ENGRAM_MODEL_ENDPOINT reach {reached[0]} at {reached[1]}"
        )
