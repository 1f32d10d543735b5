"""Evidence-gated activation of the model arm: the evaluation artifact, and the check at start.

A model may form beliefs only after it has been measured. ``engram eval formation --arm model
--record`` runs the labeled corpus through the model arm and the deterministic arm under the
same policy and writes an :class:`Evidence` file bound to the *activation fingerprint*: the
version of the policy with the extractor kind set to ``model``, which digests the model's name
and origin, the prompt's bytes, the vocabulary, the formation source, the context window and
every threshold, cap and gate. One artifact serves ``model`` and ``both`` alike.

A worker (or re-derivation) whose policy uses a model refuses to start unless the artifact at
``ENGRAM_FORMATION_EVIDENCE_PATH`` matches its fingerprint exactly and passes: coverage of the
positive cases (at least :data:`MIN_POSITIVE_CASES` of them) at least :data:`MIN_COVERAGE`, nothing fabricated in either arm, no policy
failure (forbidden, untrusted owner, secret, arm error), and no regression against the
deterministic arm (neither fewer matched labels nor lower precision). The verdict is recomputed
from the numbers on every check, so an artifact edited to say ``passed`` still refuses.
``ENGRAM_FORMATION_ALLOW_UNEVALUATED_MODEL`` starts without evidence, and says so loudly.
"""

from __future__ import annotations

import os
import tempfile
from dataclasses import replace
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from engram.formation.policy import FormationPolicy
from engram.infra.errors import EngramFailure

MIN_COVERAGE = 0.8
MIN_POSITIVE_CASES = 20
"""Coverage over fewer positive cases says too little: a corpus of three easy cases would do."""
EVIDENCE_FILE = "model-evaluation.json"
RECORD_COMMAND = "engram eval formation --arm model --record --corpus <labeled corpus>"


class ActivationRefused(EngramFailure, RuntimeError):
    """The model arm may not run: no evidence, stale evidence, or evidence that fails."""

    code = "activation_refused"


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)


class ArmScore(_Strict):
    """One arm's numbers on the corpus: what the gate decides from."""

    cases: int = Field(ge=0)
    positive_cases: int = Field(ge=0)
    covered_cases: int = Field(ge=0)
    expected: int = Field(ge=0)
    matched_labels: int = Field(ge=0)
    extracted: int = Field(ge=0)
    matched: int = Field(ge=0)
    fabricated: int = Field(ge=0)
    forbidden: int = Field(ge=0)
    untrusted_owner: int = Field(ge=0)
    secrets: int = Field(ge=0)
    errors: int = Field(ge=0)

    @property
    def coverage(self) -> float:
        """Positive cases whose every expected claim formed, over all positive cases."""
        return self.covered_cases / self.positive_cases if self.positive_cases else 0.0

    @property
    def precision(self) -> float:
        return self.matched / self.extracted if self.extracted else 1.0

    @property
    def policy_failures(self) -> int:
        return self.forbidden + self.untrusted_owner + self.secrets + self.errors


class BoundPolicy(_Strict):
    """What the evidence is about: the fingerprint and the parts a reader compares by eye."""

    fingerprint: str
    model_name: str
    model_origin: str
    prompt_digest: str
    vocabulary_digest: str
    behaviour_digest: str | None


class Evidence(_Strict):
    kind: Literal["engram.model-evaluation"] = "engram.model-evaluation"
    schema_version: Literal[1] = 1
    policy: BoundPolicy
    corpus_digest: str
    min_coverage: float
    model: ArmScore
    deterministic: ArmScore
    passed: bool
    failures: list[str]


def activation_fingerprint(policy: FormationPolicy) -> str:
    """The policy's version with the extractor kind set to ``model``: the same for a ``model``
    and a ``both`` worker of otherwise equal policy, different for any other change."""
    return replace(policy, extractor_kind="model").version


def bound_policy(policy: FormationPolicy) -> BoundPolicy:
    if policy.model_name is None or policy.model_origin is None or policy.prompt_digest is None:
        raise ValueError(f"policy {policy.version} names no model and prompt to bind evidence to")
    return BoundPolicy(
        fingerprint=activation_fingerprint(policy),
        model_name=policy.model_name,
        model_origin=policy.model_origin,
        prompt_digest=policy.prompt_digest,
        vocabulary_digest=policy.vocabulary_digest,
        behaviour_digest=policy.behaviour_digest,
    )


def judge(model: ArmScore, deterministic: ArmScore) -> list[str]:
    """Why the model arm may not be activated on these numbers; empty when it may."""
    failures: list[str] = []
    if model.positive_cases < MIN_POSITIVE_CASES:
        failures.append(
            f"the corpus has {model.positive_cases} positive cases; coverage needs at least "
            f"{MIN_POSITIVE_CASES}"
        )
    elif model.coverage < MIN_COVERAGE:
        failures.append(
            f"coverage {model.coverage:.3f} ({model.covered_cases}/{model.positive_cases} "
            f"positive cases) is below {MIN_COVERAGE}"
        )
    for arm, score in (("model", model), ("deterministic", deterministic)):
        if score.fabricated:
            failures.append(f"the {arm} arm fabricated {score.fabricated} claim(s)")
    if model.policy_failures:
        failures.append(
            f"the model arm has {model.policy_failures} policy failure(s) (forbidden "
            f"{model.forbidden}, untrusted owner {model.untrusted_owner}, secrets "
            f"{model.secrets}, errors {model.errors})"
        )
    if model.matched_labels < deterministic.matched_labels:
        failures.append(
            f"regression: the model arm matched {model.matched_labels} expected claims, the "
            f"deterministic arm {deterministic.matched_labels}"
        )
    if model.precision < deterministic.precision:
        failures.append(
            f"regression: the model arm's precision {model.precision:.3f} is below the "
            f"deterministic arm's {deterministic.precision:.3f}"
        )
    return failures


def evidence_for(
    policy: FormationPolicy, corpus_digest: str, model: ArmScore, deterministic: ArmScore
) -> Evidence:
    failures = judge(model, deterministic)
    return Evidence(
        policy=bound_policy(policy),
        corpus_digest=corpus_digest,
        min_coverage=MIN_COVERAGE,
        model=model,
        deterministic=deterministic,
        passed=not failures,
        failures=failures,
    )


def write_evidence(evidence: Evidence, path: Path) -> None:
    """Write the artifact atomically: a reader sees the old file or the new one, never half."""
    path.parent.mkdir(parents=True, exist_ok=True)
    body = evidence.model_dump_json(indent=2) + "\n"
    with tempfile.NamedTemporaryFile("w", dir=path.parent, delete=False, suffix=".tmp") as tmp:
        tmp.write(body)
    os.replace(tmp.name, path)


def read_evidence(path: Path) -> Evidence:
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        raise ActivationRefused(
            f"the model arm has no evaluation at {path}: run `{RECORD_COMMAND}` with this "
            "policy's model and prompt, or set ENGRAM_FORMATION_EVIDENCE_PATH to a passing "
            "artifact"
        ) from None
    except OSError as exc:
        raise ActivationRefused(
            f"model evaluation {path}: cannot be read ({exc.strerror})"
        ) from None
    try:
        return Evidence.model_validate_json(raw)
    except ValidationError:
        raise ActivationRefused(
            f"model evaluation {path}: is not an Engram evaluation artifact; record it again "
            f"with `{RECORD_COMMAND}`"
        ) from None


def check_activation(policy: FormationPolicy, path: Path) -> Evidence:
    """The passing evidence for ``policy``'s model arm; raises :class:`ActivationRefused`."""
    evidence = read_evidence(path)
    expected = bound_policy(policy)
    if evidence.policy.fingerprint != expected.fingerprint:
        raise ActivationRefused(
            f"model evaluation {path} was recorded for another policy "
            f"({_differences(evidence.policy, expected)}): run `{RECORD_COMMAND}` again for "
            f"policy {expected.fingerprint}"
        )
    failures = judge(evidence.model, evidence.deterministic)
    if failures:
        raise ActivationRefused(
            f"model evaluation {path} does not pass: {'; '.join(failures)}. Improve the prompt "
            f"or choose another model, then run `{RECORD_COMMAND}` again"
        )
    return evidence


def _differences(recorded: BoundPolicy, expected: BoundPolicy) -> str:
    names = {
        "model_name": "model name",
        "model_origin": "model origin",
        "prompt_digest": "prompt",
        "vocabulary_digest": "vocabulary",
        "behaviour_digest": "behaviour",
    }
    changed = [
        f"{label} {getattr(recorded, field)} != {getattr(expected, field)}"
        if field in ("model_name", "model_origin")
        else f"{label} differs"
        for field, label in names.items()
        if getattr(recorded, field) != getattr(expected, field)
    ]
    return ", ".join(changed) or "thresholds, caps, gates, relations or context window differ"


def default_evidence_path(state_dir: Path) -> Path:
    return state_dir / EVIDENCE_FILE
