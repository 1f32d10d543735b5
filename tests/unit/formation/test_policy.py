"""The policy version: any value or digest that decides changes it; how a set is written does not."""

from __future__ import annotations

from dataclasses import replace

import pytest

from engram.formation.policy import DEFAULT_ENABLED_RELATIONS, RELATION_NAMES, FormationPolicy
from engram.schemas.claims import RefusalReason
from tests.support.forming import episode, form, proposal

BASE = FormationPolicy(behaviour_digest="a" * 64)


def test_the_version_is_formation_and_sixteen_hex_digits() -> None:
    assert BASE.version.startswith("formation@")
    assert len(BASE.version.removeprefix("formation@")) == 16
    int(BASE.version.removeprefix("formation@"), 16)


@pytest.mark.parametrize(
    "change",
    [
        {"salience_threshold": 0.31},
        {"inferred_confidence_cap": 0.5},
        {"default_confidence": 0.4},
        {"explicit_confidence": 0.95},
        {"max_committed_per_consolidation": 11},
        {"scan_ceiling": 255},
        {"max_entity_name_bytes": 1024},
        {"pii_kinds": ("email",)},
        {"unresolvable_terms": ("it",)},
        {"enabled_relations": DEFAULT_ENABLED_RELATIONS[1:]},
        {"enabled_relations": RELATION_NAMES},
        {"extractor_kind": "both", "model_name": "m", "model_origin": "http://h:80"},
    ],
    ids=lambda change: next(iter(change)),
)
def test_every_value_that_decides_changes_the_version(change: dict[str, object]) -> None:
    assert replace(BASE, **change).version != BASE.version  # type: ignore[arg-type]


@pytest.mark.parametrize("digest", ["behaviour_digest", "prompt_digest", "vocabulary_digest"])
def test_every_digest_of_code_and_data_changes_the_version(digest: str) -> None:
    assert replace(BASE, **{digest: "b" * 64}).version != BASE.version  # type: ignore[arg-type]


def test_the_order_a_set_is_written_in_does_not_change_the_version() -> None:
    reordered = replace(
        BASE,
        pii_kinds=tuple(reversed(BASE.pii_kinds)),
        unresolvable_terms=tuple(reversed(BASE.unresolvable_terms)),
        enabled_relations=tuple(reversed(DEFAULT_ENABLED_RELATIONS)),
    )
    assert reordered.version == BASE.version
    assert reordered.enabled_relations == DEFAULT_ENABLED_RELATIONS


def test_a_whole_number_is_the_same_threshold_as_its_float() -> None:
    assert (
        replace(BASE, salience_threshold=1).version == replace(BASE, salience_threshold=1.0).version
    )


def test_a_policy_cannot_enable_a_relation_outside_the_vocabulary() -> None:
    with pytest.raises(ValueError, match="not in the vocabulary: resides_in"):
        FormationPolicy(enabled_relations=("lives_in", "resides_in"))


def test_no_hand_bumped_version_is_part_of_the_policy() -> None:
    assert not [name for name in vars(BASE) if name.endswith("_version") and name != "version"]


def test_a_relation_the_policy_disables_forms_nothing_and_is_refused_as_unmapped() -> None:
    policy = FormationPolicy(enabled_relations=tuple(n for n in RELATION_NAMES if n != "lives_in"))
    batch = form(episode("I live in Lisbon."), proposal(), policy=policy)
    assert batch.candidates == []
    assert [(r.reason, r.detail) for r in batch.refusals] == [
        (RefusalReason.UNMAPPED_RELATION, "disabled by the policy")
    ]
