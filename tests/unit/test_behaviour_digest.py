"""The behaviour digest: the policy version follows what the cores do, not their bytes.

The committed digest (``policies/behaviour.sha256``) must be what the formation and resolution
cores make of the pinned corpus today; a change of behaviour fails here until the new digest is
written (``engram policy behaviour --write``), and so cannot land without changing the version.
"""

from __future__ import annotations

from pathlib import Path

import pytest

import formation.core
from policies.behaviour import (
    behaviour_digest,
    committed_behaviour_digest,
    generated_corpus,
    pinned_corpus,
)

CORPUS = Path(__file__).resolve().parents[1] / "corpus"


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
    shouted = formation.core.render_statement

    def render(*args: object, **kwargs: object) -> str:
        return shouted(*args, **kwargs).upper()  # type: ignore[arg-type]

    monkeypatch.setattr(formation.core, "render_statement", render)
    assert behaviour_digest(corpus) != before


def test_the_generated_corpus_is_a_function_of_its_size_and_seed() -> None:
    first = generated_corpus(200)
    assert [e.model_dump() for e in first] == [e.model_dump() for e in generated_corpus(200)]
    assert [e.event_id for e in generated_corpus(200, seed=1)] == [e.event_id for e in first]
    assert [e.model_dump() for e in generated_corpus(200, seed=1)] != [
        e.model_dump() for e in first
    ]
