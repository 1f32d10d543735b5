"""``engram policy show``: its version follows the formation source, the prompt and every
threshold, not the formatting of a policy file; it never shows a credential."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from pydantic import SecretStr
from typer.testing import CliRunner

from engram.cli import app
from engram.formation.policy import FormationPolicy
from engram.infra.settings import DatabaseSettings, FormationSettings, ModelSettings, Settings
from engram.policies.behaviour import committed_behaviour_digest
from engram.policies.prompt import packaged_prompt_bytes

API_KEY = "sk-live-hunter2-secret"
DATABASE_PASSWORD = "pg-hunter3"


def use_settings(monkeypatch: pytest.MonkeyPatch, **formation: object) -> None:
    """Settings with a model, an api key and a database password the output must not show."""
    chosen = Settings(
        model=ModelSettings(
            endpoint="https://api.example.com/v1/",
            name="qwen",
            api_key=SecretStr(API_KEY),
        ),
        formation=FormationSettings(**formation),  # type: ignore[arg-type]
        database=DatabaseSettings(
            url=SecretStr(f"postgresql://engram:{DATABASE_PASSWORD}@127.0.0.1:15432/engram")
        ),
    )
    monkeypatch.setattr("engram.cli.policy.load_settings", lambda: chosen)


def show(*args: str) -> str:
    result = CliRunner().invoke(app, ["policy", "show", *args])
    assert result.exit_code == 0, result.output
    return result.stdout


def shown_version(*args: str) -> str:
    summary: dict[str, str] = json.loads(show("--json", *args))
    return summary["version"]


def test_the_shown_yaml_reads_back_with_the_same_version(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    use_settings(monkeypatch, extractor="model")
    path = tmp_path / "policy.yaml"
    path.write_text(show())
    assert f"# version: {shown_version()}" in path.read_text()
    assert shown_version("--policy", str(path)) == shown_version()


def test_the_shown_version_follows_the_committed_behaviour_digest_not_the_source(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """A comment or an output-identical refactor in either core changes no byte of the
    committed digest, so the version stays; a new digest (a change of behaviour, which
    tests/unit/test_behaviour_digest.py makes land with its digest) changes it."""
    use_settings(monkeypatch)
    before = shown_version()
    assert before == FormationPolicy(behaviour_digest=committed_behaviour_digest()).version
    monkeypatch.setattr("engram.policies.in_force.committed_behaviour_digest", lambda: "0" * 64)
    assert shown_version() != before


def test_editing_the_prompt_changes_the_shown_version(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    prompt = tmp_path / "extraction.yaml"
    prompt.write_bytes(packaged_prompt_bytes())
    use_settings(monkeypatch, extractor="model", prompt_path=prompt)
    before = shown_version()
    prompt.write_bytes(packaged_prompt_bytes().replace(b"exact", b"verbatim", 1))
    assert shown_version() != before


def test_a_threshold_changes_the_shown_version(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    use_settings(monkeypatch)
    path = tmp_path / "policy.yaml"
    path.write_text(show())
    before = shown_version("--policy", str(path))
    path.write_text(
        path.read_text().replace("salience_threshold: 0.45", "salience_threshold: 0.35")
    )
    assert shown_version("--policy", str(path)) != before


def test_reformatting_the_policy_file_does_not_change_the_shown_version(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    use_settings(monkeypatch)
    path = tmp_path / "policy.yaml"
    path.write_text(show())
    before = shown_version("--policy", str(path))
    document = json.loads(show("--json"))["policy"]
    sections = dict(reversed(list(document.items())))
    path.write_text("# reordered, flow style, four spaces\n" + json.dumps(sections, indent=4))
    assert shown_version("--policy", str(path)) == before


@pytest.mark.parametrize("as_json", [False, True], ids=["yaml", "json"])
def test_credentials_never_appear_in_policy_show(
    monkeypatch: pytest.MonkeyPatch, as_json: bool
) -> None:
    use_settings(monkeypatch, extractor="both")
    output = show("--json") if as_json else show()
    assert "qwen" in output and "https://api.example.com:443" in output
    assert API_KEY not in output and DATABASE_PASSWORD not in output
    assert "api_key" not in output and "/v1" not in output


def test_a_bad_policy_file_exits_2_naming_the_key(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    use_settings(monkeypatch)
    path = tmp_path / "policy.yaml"
    path.write_text("caps:\n  scan_ceilling: 9\n")
    result = CliRunner().invoke(app, ["policy", "show", "--policy", str(path)])
    assert result.exit_code == 2
    assert f"policy file {path}: caps.scan_ceilling: unknown key" in result.stderr
