"""The labeled corpus on the deterministic arm: safe always, and measured quality.

Two parts, scored apart: the rule corpus (formation.yaml and redteam.yaml), which grows with
every pattern, and the frozen split (frozen/), written before the issue 12 tuning and never
tuned on. The floors are the measured values less a small margin (docs/formation-quality.md
records them): rule corpus precision 1.000, recall 0.984; frozen precision 0.833, recall 0.952
(of the frozen split's four unlabeled claims, two are true events its labels did not foresee and
one a true interest, "I've always had a real passion for woodworking", read since issue 39 by a
rule written from the dev conversations; the split is not edited to credit them).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from engram.evaluation.corpus import Case, load_corpus
from engram.evaluation.scoring import ArmReport, evaluate_arm
from engram.formation.deterministic.arm import deterministic_arm
from engram.formation.policy import FormationPolicy

CORPUS = Path(__file__).resolve().parents[2] / "corpus"
RULE_FILES = ("formation.yaml", "redteam.yaml")
FROZEN = CORPUS / "frozen"
PRECISION_FLOOR = 0.99
RECALL_FLOOR = 0.98
FROZEN_PRECISION_FLOOR = 0.83
FROZEN_RECALL_FLOOR = 0.94


def _rule_cases() -> list[Case]:
    return [case for name in RULE_FILES for case in load_corpus(CORPUS / name)]


async def _score(cases: list[Case]) -> ArmReport:
    return await evaluate_arm("deterministic", cases, deterministic_arm, FormationPolicy())


@pytest.fixture(scope="module")
async def report() -> ArmReport:
    return await _score(_rule_cases())


@pytest.fixture(scope="module")
async def frozen() -> ArmReport:
    return await _score(load_corpus(FROZEN))


def test_the_formation_corpus_is_large_and_has_cases_that_form_nothing() -> None:
    cases = load_corpus(CORPUS / "formation.yaml")
    assert len(cases) >= 150
    assert sum(not c.expect for c in cases) >= 40


def test_the_frozen_split_is_a_folder_of_its_own_with_forty_cases_or_more() -> None:
    assert len(load_corpus(FROZEN)) >= 40
    assert {c.id for c in load_corpus(FROZEN)}.isdisjoint({c.id for c in _rule_cases()})


def _assert_safe(scored: ArmReport) -> None:
    for name in ("fabricated", "forbidden", "untrusted_owner", "secrets"):
        assert scored.total(name) == 0, [d for d in scored.to_dict()["diffs"] if name in d]
    assert scored.errors == 0
    assert scored.ok


async def test_nothing_fabricated_forbidden_untrusted_or_secret_forms(report: ArmReport) -> None:
    _assert_safe(report)


async def test_nothing_fabricated_forbidden_untrusted_or_secret_forms_on_the_frozen_split(
    frozen: ArmReport,
) -> None:
    _assert_safe(frozen)


async def test_precision_and_recall_stay_above_their_measured_floors(report: ArmReport) -> None:
    assert report.precision >= PRECISION_FLOOR, report.to_dict()["diffs"]
    assert report.recall >= RECALL_FLOOR, report.to_dict()["diffs"]


async def test_the_frozen_split_stays_above_its_measured_floors(frozen: ArmReport) -> None:
    assert frozen.precision >= FROZEN_PRECISION_FLOOR, frozen.to_dict()["diffs"]
    assert frozen.recall >= FROZEN_RECALL_FLOOR, frozen.to_dict()["diffs"]
