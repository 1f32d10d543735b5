"""Refusing to start a model policy without its evidence, as a command line says it."""

from __future__ import annotations

from engram.cli.failures import refuse
from engram.formation.policy import FormationPolicy
from engram.infra.settings import Settings
from engram.streams.model.evidence import ActivationRefused
from engram.streams.wiring import Activation, PolicyMismatch, activate_model, check_model_identity


def activation_or_exit(settings: Settings, policy: FormationPolicy) -> Activation | None:
    """A model policy's activation, or exit 2 saying what to run; None without a model.

    Checked with the process's own settings, before anything is created for a generation."""
    if not policy.uses_model:
        return None
    try:
        check_model_identity(policy, settings)
        return activate_model(policy, settings)
    except (ActivationRefused, PolicyMismatch) as error:
        refuse(error, "not started")
