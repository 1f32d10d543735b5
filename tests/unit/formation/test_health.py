"""Health the speaker states of themselves (issue 27, item 4): special category data.

It forms only under a policy that enables ``has_condition``; then every candidate is classified
``health``, flagged for review and ``local``. Under the default policy the arm's proposal is
refused as disabled, and nothing of it forms. Every sentence is written for this file.
"""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from engram.formation.deterministic import propose
from engram.formation.policy import DEFAULT_ENABLED_RELATIONS, RELATION_NAMES, FormationPolicy
from engram.schemas.claims import ClaimsBatchFormed, Portability, RefusalReason
from tests.support.forming import episode, form, message
from tests.unit.formation.formed import EPISODE_DAY

HEALTH_ON = FormationPolicy(enabled_relations=RELATION_NAMES)


def formed_under(content: str, policy: FormationPolicy) -> ClaimsBatchFormed:
    made = episode(
        message(content),
        principal="p",
        project="proj",
        occurred_at=datetime(2024, 5, 8, 12, 0, tzinfo=UTC),
    )
    return form(made, by_message={0: propose(content, occurred_on=EPISODE_DAY)}, policy=policy)


def conditions(content: str) -> set[str]:
    batch = formed_under(content, HEALTH_ON)
    return {c.object.text for c in batch.candidates if c.relation == "has_condition"}


@pytest.mark.parametrize(
    ("content", "condition"),
    [
        ("I have asthma, so I carry an inhaler.", "asthma"),
        ("I was diagnosed with type 1 diabetes when I was nine.", "type 1 diabetes"),
        ("I've got migraines, bright screens are rough.", "migraines"),
        ("I live with chronic eczema.", "chronic eczema"),
        ("I have celiac disease.", "celiac disease"),
        ("I'm allergic to sesame.", "sesame allergy"),
        ("I'm severely allergic to peanuts.", "peanut allergy"),
        ("I have a shellfish allergy.", "shellfish allergy"),
        ("I sprained my ankle on the trail.", "sprained ankle"),
        ("I tore my ACL playing rugby.", "torn acl"),
        ("I've been vegetarian since college.", "vegetarian diet"),
        ("I'm lactose intolerant.", "lactose intolerance"),
    ],
)
def test_a_condition_injury_allergy_or_diet_of_the_speaker_forms(
    content: str, condition: str
) -> None:
    assert conditions(content) == {condition}


@pytest.mark.parametrize(
    "content",
    [
        "My brother has asthma.",
        "I have a cold.",
        "I have some anxiety about the exam.",
        "I hope I don't have the flu.",
        "Do I have asthma?",
        "I'm vegan food obsessed lately.",
        "I love vegan recipes.",
        "I broke my phone screen.",
        "I'm allergic to Mondays.",
        "You should get your knee checked.",
    ],
)
def test_someone_else_a_passing_illness_a_fear_or_a_look_alike_forms_nothing(
    content: str,
) -> None:
    assert conditions(content) == set()


def test_health_is_classified_flagged_and_local() -> None:
    [candidate] = formed_under("I've been vegan for years.", HEALTH_ON).candidates
    assert candidate.relation == "has_condition"
    assert candidate.sensitivity == ["health"]  # no health word in "vegan": the relation says it
    assert candidate.flagged_for_review
    assert candidate.portability is Portability.LOCAL


def test_the_default_policy_forms_no_health() -> None:
    assert "has_condition" not in DEFAULT_ENABLED_RELATIONS
    batch = formed_under("I have asthma.", FormationPolicy())
    assert batch.candidates == []
    assert [r.reason for r in batch.refusals] == [RefusalReason.UNMAPPED_RELATION]


def test_a_refused_health_claim_keeps_no_words_of_it() -> None:
    [refusal] = formed_under("I have asthma.", FormationPolicy()).refusals
    assert refusal.relation == "has_condition"
    assert refusal.statement == refusal.quote == "[redacted:health]"
    assert "asthma" not in refusal.model_dump_json()
