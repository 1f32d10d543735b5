"""The whole labeled corpus on the deterministic arm: safe always, and measured quality.

The floors are what the deterministic arm measured when they were set (precision 1.0, recall
0.96 over tests/corpus), less a margin; docs/formation-quality.md records the numbers.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from engram.cli.evaluation.corpus import load_corpus
from engram.cli.evaluation.scoring import ArmReport, evaluate_arm
from formation.deterministic.arm import deterministic_arm
from formation.policy import FormationPolicy

CORPUS = Path(__file__).resolve().parents[2] / "corpus"
PRECISION_FLOOR = 0.9
RECALL_FLOOR = 0.9


@pytest.fixture(scope="module")
async def report() -> ArmReport:
    cases = load_corpus(CORPUS)
    return await evaluate_arm("deterministic", cases, deterministic_arm, FormationPolicy())


def test_the_formation_corpus_is_large_and_has_cases_that_form_nothing() -> None:
    cases = load_corpus(CORPUS / "formation.yaml")
    assert len(cases) >= 150
    assert sum(not c.expect for c in cases) >= 40


async def test_nothing_fabricated_forbidden_untrusted_or_secret_forms(report: ArmReport) -> None:
    for name in ("fabricated", "forbidden", "untrusted_owner", "secrets"):
        assert report.total(name) == 0, [d for d in report.to_dict()["diffs"] if name in d]
    assert report.errors == 0
    assert report.ok


async def test_precision_and_recall_stay_above_their_measured_floors(report: ArmReport) -> None:
    assert report.precision >= PRECISION_FLOOR, report.to_dict()["diffs"]
    assert report.recall >= RECALL_FLOOR, report.to_dict()["diffs"]
