"""Evidence-gated activation: an artifact starts a model policy only when it was recorded for
exactly that policy and its numbers pass; the verdict is recomputed, never taken on trust."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from engram.formation.policy import FormationPolicy
from engram.streams.model.evidence import (
    ActivationRefused,
    ArmScore,
    activation_fingerprint,
    check_activation,
    evidence_for,
    judge,
    read_evidence,
    write_evidence,
)

POLICY = FormationPolicy(
    extractor_kind="model",
    model_name="qwen",
    model_origin="http://127.0.0.1:8000",
    prompt_digest="p" * 64,
    behaviour_digest="s" * 64,
)


def arm(**overrides: int) -> ArmScore:
    numbers: dict[str, Any] = {
        "cases": 30,
        "positive_cases": 20,
        "covered_cases": 18,
        "expected": 40,
        "matched_labels": 38,
        "extracted": 38,
        "matched": 38,
        "fabricated": 0,
        "forbidden": 0,
        "untrusted_owner": 0,
        "secrets": 0,
        "errors": 0,
    }
    numbers.update(overrides)
    return ArmScore(**numbers)


def recorded(tmp_path: Path, model: ArmScore, baseline: ArmScore | None = None) -> Path:
    path = tmp_path / "evidence.json"
    write_evidence(evidence_for(POLICY, "c" * 64, model, baseline or arm()), path)
    return path


def test_a_model_and_a_both_worker_share_one_fingerprint() -> None:
    both = replace(POLICY, extractor_kind="both")
    assert both.version != POLICY.version
    assert activation_fingerprint(both) == activation_fingerprint(POLICY)


@pytest.mark.parametrize(
    "change",
    [
        {"prompt_digest": "q" * 64},
        {"model_name": "llama"},
        {"model_origin": "http://127.0.0.1:9000"},
        {"vocabulary_digest": "v" * 64},
        {"behaviour_digest": "t" * 64},
        {"context_messages": 2},
        {"salience_threshold": 0.4},
    ],
)
def test_any_change_to_what_forms_changes_the_fingerprint(change: dict[str, Any]) -> None:
    assert activation_fingerprint(replace(POLICY, **change)) != activation_fingerprint(POLICY)


def test_passing_numbers_pass() -> None:
    assert judge(arm(), arm()) == []


@pytest.mark.parametrize(
    ("model", "baseline", "reason"),
    [
        (arm(covered_cases=15), arm(), "coverage 0.750"),
        (arm(fabricated=1), arm(), "the model arm fabricated 1"),
        (arm(), arm(fabricated=1), "the deterministic arm fabricated 1"),
        (arm(forbidden=1), arm(), "policy failure"),
        (arm(untrusted_owner=1), arm(), "policy failure"),
        (arm(secrets=1), arm(), "policy failure"),
        (arm(errors=2), arm(), "policy failure"),
        (arm(matched_labels=37), arm(), "regression: the model arm matched 37"),
        (arm(extracted=40), arm(), "regression: the model arm's precision 0.950"),
        (arm(positive_cases=19, covered_cases=19), arm(), "19 positive cases; coverage needs"),
    ],
)
def test_each_condition_can_fail_on_its_own(
    model: ArmScore, baseline: ArmScore, reason: str
) -> None:
    failures = judge(model, baseline)
    assert len(failures) == 1 and reason in failures[0]


def test_coverage_of_exactly_eighty_percent_passes() -> None:
    assert judge(arm(covered_cases=16), arm()) == []


def test_a_passing_artifact_for_the_policy_activates_it(tmp_path: Path) -> None:
    path = recorded(tmp_path, arm())
    evidence = check_activation(POLICY, path)
    assert evidence.passed
    assert check_activation(replace(POLICY, extractor_kind="both"), path) == evidence


def test_a_missing_artifact_refuses_and_says_what_to_run(tmp_path: Path) -> None:
    with pytest.raises(ActivationRefused, match="engram eval formation --arm model --record"):
        check_activation(POLICY, tmp_path / "none.json")


@pytest.mark.parametrize(
    ("change", "named"),
    [
        ({"prompt_digest": "q" * 64}, "prompt differs"),
        ({"model_name": "llama"}, "model name qwen != llama"),
        ({"salience_threshold": 0.4}, "thresholds, caps, gates"),
    ],
)
def test_an_artifact_for_another_policy_is_stale(
    tmp_path: Path, change: dict[str, Any], named: str
) -> None:
    path = recorded(tmp_path, arm())
    with pytest.raises(ActivationRefused, match="recorded for another policy") as raised:
        check_activation(replace(POLICY, **change), path)
    assert named in str(raised.value)


def test_a_failing_artifact_refuses_with_its_reasons(tmp_path: Path) -> None:
    path = recorded(tmp_path, arm(covered_cases=10))
    assert not read_evidence(path).passed
    with pytest.raises(ActivationRefused, match=r"does not pass: coverage 0\.500"):
        check_activation(POLICY, path)


def test_an_artifact_edited_to_pass_still_refuses(tmp_path: Path) -> None:
    path = recorded(tmp_path, arm(fabricated=3))
    document = json.loads(path.read_text())
    document.update(passed=True, failures=[])
    path.write_text(json.dumps(document))
    with pytest.raises(ActivationRefused, match="fabricated 3"):
        check_activation(POLICY, path)


def test_a_file_that_is_not_an_artifact_refuses(tmp_path: Path) -> None:
    path = tmp_path / "evidence.json"
    path.write_text('{"passed": true}')
    with pytest.raises(ActivationRefused, match="not an Engram evaluation artifact"):
        check_activation(POLICY, path)
