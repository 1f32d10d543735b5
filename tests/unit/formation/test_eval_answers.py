"""`engram eval formation --answers`: the model arm answered from recorded answers, in process.

Answers name their prompt; answers for another prompt are stale and refused unless accepted.
The requests written for a corpus are keyed as the answers are, so answers recorded from them
replay. The sentences are the project's own.
"""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from engram.evaluation.answers import answer_key
from engram.evaluation.command import eval_app
from engram.policies.prompt import load_extraction_prompt

CORPUS = """
- id: plan-cello
  messages:
  - role: user
    content: I'm going to learn the cello this winter.
  - role: assistant
    content: I play the cello myself.
  expect:
  - subject: speaker
    relation: intends_to
    object: learn the cello
"""

TEXT = "I'm going to learn the cello this winter."
CLAIM = {
    "subject": "I",
    "relation": "intends_to",
    "object": "learn the cello",
    "quote": "I'm going to learn the cello",
    "polarity": "assert",
    "tense": "future",
}


def _files(tmp_path: Path, digest: str) -> tuple[Path, Path]:
    corpus = tmp_path / "corpus.yaml"
    corpus.write_text(CORPUS)
    answers = tmp_path / "answers.jsonl"
    rows = [{"prompt_sha256": digest}, {"key": answer_key("user", TEXT), "claims": [CLAIM]}]
    answers.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return corpus, answers


def test_recorded_answers_run_the_model_arm_and_say_what_was_asked(tmp_path: Path) -> None:
    corpus, answers = _files(tmp_path, load_extraction_prompt(None).digest)
    args = ["formation", "--corpus", str(corpus), "--arm", "model", "--answers", str(answers)]
    result = CliRunner().invoke(eval_app, [*args, "--json"])
    assert result.exit_code == 0, result.output
    body = json.loads(result.output)
    [model] = body["arms"]
    assert (model["arm"], model["matched"], model["expected"]) == ("model", 1, 1)
    calls = body["model"]["calls"]
    assert (calls["asked"], calls["skipped"]) == (1, {"untrusted_source": 1})
    assert body["model"]["stale"] is None


def test_stale_answers_are_refused_unless_accepted(tmp_path: Path) -> None:
    corpus, answers = _files(tmp_path, "ab" * 32)
    args = ["formation", "--corpus", str(corpus), "--arm", "model", "--answers", str(answers)]
    refused = CliRunner().invoke(eval_app, args)
    assert refused.exit_code == 2
    assert "abababababab" in refused.output and "--accept-stale" in refused.output
    accepted = CliRunner().invoke(eval_app, [*args, "--accept-stale", "--json"])
    assert accepted.exit_code == 0, accepted.output
    assert "abababababab" in json.loads(accepted.output)["model"]["stale"]


def test_the_requests_written_for_a_corpus_are_keyed_as_answers_are(tmp_path: Path) -> None:
    corpus, _ = _files(tmp_path, "ab" * 32)
    out = tmp_path / "requests.jsonl"
    args = ["formation", "--corpus", str(corpus), "--arm", "model", "--write-requests", str(out)]
    result = CliRunner().invoke(eval_app, args)
    assert result.exit_code == 0, result.output
    [request] = [json.loads(line) for line in out.read_text().splitlines()]
    assert request["key"] == answer_key("user", TEXT) and request["role"] == "user"
    assert request["user"].startswith("Episode date: ")
    assert TEXT in request["user"] and "Speaker: user" in request["user"]
    assert "facet" in request["system"]
