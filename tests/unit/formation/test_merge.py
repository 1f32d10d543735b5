"""Merging the deterministic and model arms: each claim once, deterministic first, stable."""

from __future__ import annotations

from typing import Any

from engram.formation.merge import merge_proposals
from engram.formation.proposals import Proposal


def proposal(extractor: str, **overrides: Any) -> Proposal:
    fields: dict[str, Any] = {
        "subject": "I",
        "relation": "lives_in",
        "object": "Lisbon",
        "quote": "I live in Lisbon",
        "polarity": "assert",
        "tense": "present",
    }
    fields.update(overrides)
    return Proposal(extractor=extractor, **fields)


def det(**overrides: Any) -> Proposal:
    return proposal("deterministic", **overrides)


def model(**overrides: Any) -> Proposal:
    return proposal("model:m", **overrides)


class TestTheSameClaimFromBothArmsIsKeptOnce:
    def test_the_deterministic_proposal_wins(self) -> None:
        merged = merge_proposals([det()], [model(quote="live in Lisbon", confidence=0.9)])
        assert merged == [det()]

    def test_ends_are_compared_without_case_or_spacing(self) -> None:
        merged = merge_proposals([det(object="new  york")], [model(object="New York")])
        assert merged == [det(object="new  york")]

    def test_first_person_terms_are_all_the_speaker(self) -> None:
        assert merge_proposals([det(subject="I")], [model(subject="me")]) == [det(subject="I")]

    def test_project_terms_are_all_the_project(self) -> None:
        merged = merge_proposals(
            [det(subject="we", relation="uses", object="Kafka")],
            [model(subject="our team", relation="uses", object="Kafka")],
        )
        assert [p.extractor for p in merged] == ["deterministic"]

    def test_a_repeat_within_one_arm_is_dropped_too(self) -> None:
        assert merge_proposals([], [model(), model(tense="past")]) == [model()]

    def test_facets_compare_without_case(self) -> None:
        merged = merge_proposals(
            [det(relation="prefers", object="vim", facet="Editor")],
            [model(relation="prefers", object="vim", facet="editor")],
        )
        assert len(merged) == 1


class TestDifferentClaimsAreAllKept:
    def test_a_different_polarity_is_a_different_claim(self) -> None:
        merged = merge_proposals([det()], [model(polarity="retract")])
        assert [p.polarity for p in merged] == ["assert", "retract"]

    def test_a_different_facet_is_a_different_claim(self) -> None:
        merged = merge_proposals(
            [det(relation="prefers", object="vim", facet="editor")],
            [model(relation="prefers", object="vim", facet=None)],
        )
        assert len(merged) == 2

    def test_a_different_relation_or_end_is_a_different_claim(self) -> None:
        merged = merge_proposals([det()], [model(relation="born_in"), model(object="Porto")])
        assert len(merged) == 3


class TestTheOrderIsStable:
    def test_deterministic_first_then_model_each_in_its_own_order(self) -> None:
        deterministic = [det(object="A"), det(object="B")]
        from_model = [model(object="C"), model(object="a"), model(object="D")]
        merged = merge_proposals(deterministic, from_model)
        assert [(p.extractor, p.object) for p in merged] == [
            ("deterministic", "A"),
            ("deterministic", "B"),
            ("model:m", "C"),
            ("model:m", "D"),
        ]

    def test_merging_is_a_function_of_its_inputs(self) -> None:
        deterministic = [det(object=o) for o in "ABC"]
        from_model = [model(object=o) for o in "CDBE"]
        assert merge_proposals(deterministic, from_model) == merge_proposals(
            list(deterministic), list(from_model)
        )

    def test_empty_arms_merge_to_nothing(self) -> None:
        assert merge_proposals([], []) == []
