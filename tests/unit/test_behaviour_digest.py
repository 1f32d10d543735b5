"""The behaviour digest: the policy version follows what the cores do, not their bytes.

The committed digest (``engram/policies/behaviour.sha256``) must be what the formation and resolution
cores make of the pinned corpus today; a change of behaviour fails here until the new digest is
written (``engram policy behaviour --write``), and so cannot land without changing the version.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import engram.formation.core
from engram.policies.behaviour import (
    behaviour_digest,
    committed_behaviour_digest,
    generated_corpus,
    pinned_corpus,
)

CORPUS = Path(__file__).resolve().parents[1] / "corpus"
REPO = Path(__file__).resolve().parents[2]
IGNORED = shutil.ignore_patterns("__pycache__")


def test_the_committed_digest_is_what_the_cores_do_over_the_pinned_corpus() -> None:
    computed = behaviour_digest(pinned_corpus(CORPUS))
    assert computed == committed_behaviour_digest(), (
        "the formation or resolution core forms differently now: if that is meant, run "
        "`engram policy behaviour --write` (the policy version changes: the release needs a "
        "re-derivation, docs/rederivation.md); if not, find what changed"
    )


def test_a_change_of_behaviour_changes_the_digest(monkeypatch: pytest.MonkeyPatch) -> None:
    corpus = generated_corpus(400)
    before = behaviour_digest(corpus)
    assert behaviour_digest(corpus) == before, "the digest is a function of the corpus"
    shouted = engram.formation.core.render_statement

    def render(*args: object, **kwargs: object) -> str:
        return shouted(*args, **kwargs).upper()  # type: ignore[arg-type]

    monkeypatch.setattr(engram.formation.core, "render_statement", render)
    assert behaviour_digest(corpus) != before


def test_the_generated_corpus_is_a_function_of_its_size_and_seed() -> None:
    first = generated_corpus(200)
    assert [e.model_dump() for e in first] == [e.model_dump() for e in generated_corpus(200)]
    assert [e.event_id for e in generated_corpus(200, seed=1)] == [e.event_id for e in first]
    assert [e.model_dump() for e in generated_corpus(200, seed=1)] != [
        e.model_dump() for e in first
    ]


def test_a_comment_in_either_core_keeps_the_shown_version(tmp_path: Path) -> None:
    """The version used to hash every byte of formation/: a comment stopped every worker until
    a re-derivation. Now a copy of the tree with a comment added to each core shows the same
    version as this one (``engram policy show --json`` run on the copy)."""
    # The links to the card's folders (engram/streams -> ../streams, ...) are copied as folders.
    shutil.copytree(REPO / "engram", tmp_path / "engram", ignore=IGNORED)
    for module in ("engram/formation/core.py", "engram/resolution/resolve.py"):
        path = tmp_path / module
        path.write_text(path.read_text(encoding="utf-8") + "\n# a comment changes nothing\n")

    def shown(root: Path) -> str:
        answer = subprocess.run(
            [sys.executable, "-m", "engram", "policy", "show", "--json"],
            cwd=root,
            env={**os.environ, "PYTHONPATH": str(root)},
            capture_output=True,
            text=True,
            timeout=120,
            check=True,
        )
        version: str = json.loads(answer.stdout)["version"]
        return version

    imported = subprocess.run(
        [
            sys.executable,
            "-c",
            "import engram.formation.core as c, engram.resolution.resolve as r; print(c.__file__, r.__file__)",
        ],
        cwd=tmp_path,
        env={**os.environ, "PYTHONPATH": str(tmp_path)},
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    assert all(path.startswith(str(tmp_path)) for path in imported.stdout.split()), "the copy ran"
    assert shown(tmp_path) == shown(REPO)
    assert (tmp_path / "engram/formation/core.py").read_bytes() != (
        REPO / "engram/formation/core.py"
    ).read_bytes()
