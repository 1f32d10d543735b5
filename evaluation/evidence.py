"""Recording the model arm's evaluation: both arms under one policy, scored, bound, written.

The model arm runs here as a worker would run it — the policy's relations and PII kinds, the
case's earlier messages as its context window (redacted and bounded by the policy), the
episode's event-time date — but without receipts, retries or a database: one answer per
message, and a failed call is an arm error, which fails the evaluation. The deterministic arm
runs under the same policy with the kind set to ``deterministic``, so the two differ only in
the extractor.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from dataclasses import replace
from typing import TYPE_CHECKING

from engram.evaluation.corpus import Case
from engram.evaluation.model_run import ModelCalls, case_arm
from engram.evaluation.scoring import (
    ArmReport,
    EpisodeArm,
    evaluate_arm,
    evaluate_episode_arm,
)
from engram.formation.deterministic.arm import deterministic_arm
from engram.formation.policy import FormationPolicy
from engram.infra.settings import Settings
from engram.streams.model.evidence import ArmScore, Evidence, evidence_for
from engram.streams.wiring import model_extractor_for

if TYPE_CHECKING:  # not at run time: the openai client loads only when a model is built
    from engram.streams.model.extractor import ModelExtractor


def corpus_digest(cases: Sequence[Case]) -> str:
    """SHA-256 of the cases as data (ids, messages, labels), in order."""
    payload = json.dumps([case.model_dump(mode="json") for case in cases], sort_keys=True)
    return hashlib.sha256(payload.encode()).hexdigest()


def score(report: ArmReport) -> ArmScore:
    return ArmScore(
        cases=len(report.results),
        positive_cases=report.positive_cases,
        covered_cases=report.covered_cases,
        expected=report.expected,
        matched_labels=report.matched_labels,
        extracted=report.extracted,
        matched=report.matched,
        fabricated=report.total("fabricated"),
        forbidden=report.total("forbidden"),
        untrusted_owner=report.total("untrusted_owner"),
        secrets=report.total("secrets"),
        errors=report.errors,
    )


def with_context(extractor: ModelExtractor, policy: FormationPolicy) -> EpisodeArm:
    """The model arm over a case: earlier messages of the case as context, its date; a message
    nothing of which can be kept is not asked about (:func:`.model_run.case_arm`)."""
    return case_arm(extractor.propose, policy, ModelCalls())


async def evaluate_model(
    settings: Settings, policy: FormationPolicy, cases: Sequence[Case]
) -> ArmReport:
    async with model_extractor_for(settings, policy) as extractor:
        return await evaluate_episode_arm("model", cases, with_context(extractor, policy), policy)


async def record(
    settings: Settings, policy: FormationPolicy, cases: Sequence[Case]
) -> tuple[Evidence, list[ArmReport]]:
    """Both arms' reports and the evidence they make for ``policy`` (kind ``model``)."""
    plain = replace(policy, extractor_kind="deterministic")
    baseline = await evaluate_arm("deterministic", cases, deterministic_arm, plain)
    model = await evaluate_model(settings, policy, cases)
    evidence = evidence_for(policy, corpus_digest(cases), score(model), score(baseline))
    return evidence, [baseline, model]
