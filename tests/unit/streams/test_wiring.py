"""The policy in force: a policy file when one is set, the prompt only when a model is used,
and never a model other than the one the policy names."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from engram.infra.settings import FormationSettings, ModelSettings, Settings
from engram.policies.behaviour import committed_behaviour_digest
from engram.policies.in_force import default_policy, effective_policy
from engram.policies.prompt import packaged_prompt_bytes
from engram.streams.wiring import PolicyMismatch, build_stage

ENDPOINT = "http://127.0.0.1:8000/v1"
MODEL_FILE = "extractor: {kind: model}\nmodel: {name: qwen, origin: 'http://127.0.0.1:8000'}\n"


def settings(
    *,
    extractor: str = "deterministic",
    name: str | None = "qwen",
    prompt_path: Path | None = None,
    policy_file: Path | None = None,
) -> Settings:
    return Settings(
        model=ModelSettings(endpoint=ENDPOINT, name=name, allowlist=["http://127.0.0.1:8000"]),
        formation=FormationSettings(
            extractor=extractor,
            allow_unevaluated_model=True,
            prompt_path=prompt_path,
            policy_file=policy_file,
        ),
    )


def edited_prompt(tmp_path: Path) -> Path:
    path = tmp_path / "extraction.yaml"
    path.write_bytes(packaged_prompt_bytes() + b"\n# an edit\n")
    return path


def test_editing_the_prompt_changes_the_version_of_a_model_policy(tmp_path: Path) -> None:
    shipped = effective_policy(settings(extractor="model"))
    edited = effective_policy(settings(extractor="model", prompt_path=edited_prompt(tmp_path)))
    assert shipped.prompt_digest is not None
    assert edited.version != shipped.version


def test_the_prompt_does_not_decide_a_deterministic_policy(tmp_path: Path) -> None:
    edited = effective_policy(settings(prompt_path=edited_prompt(tmp_path)))
    assert edited.version == effective_policy(settings()).version == default_policy().version


def test_the_version_follows_the_committed_behaviour_digest_of_this_build() -> None:
    assert default_policy().behaviour_digest == committed_behaviour_digest()


def test_the_policy_file_setting_decides_the_policy_in_force(tmp_path: Path) -> None:
    path = tmp_path / "policy.yaml"
    path.write_text("thresholds: {salience_threshold: 0.4}\n")
    policy = effective_policy(settings(policy_file=path))
    assert policy.salience_threshold == 0.4
    assert build_stage(settings(policy_file=path)).policy.version == policy.version


def test_a_policy_file_given_explicitly_wins_over_the_setting(tmp_path: Path) -> None:
    (tmp_path / "set.yaml").write_text("caps: {scan_ceiling: 10}\n")
    (tmp_path / "given.yaml").write_text("caps: {scan_ceiling: 20}\n")
    policy = effective_policy(settings(policy_file=tmp_path / "set.yaml"), tmp_path / "given.yaml")
    assert policy.scan_ceiling == 20


def test_a_policy_file_naming_another_model_than_the_settings_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "policy.yaml"
    path.write_text(MODEL_FILE)
    with pytest.raises(
        PolicyMismatch, match=re.escape("names model qwen at http://127.0.0.1:8000")
    ):
        build_stage(settings(name="llama", policy_file=path))


def test_a_model_policy_file_decides_the_extractor_kind(tmp_path: Path) -> None:
    path = tmp_path / "policy.yaml"
    path.write_text(MODEL_FILE)
    stage = build_stage(settings(policy_file=path))
    assert stage.policy.extractor_kind == "model"
    assert (stage.policy.model_name, stage.policy.model_origin) == ("qwen", "http://127.0.0.1:8000")
