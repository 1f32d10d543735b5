"""The diff of two generations is by content: ids never matter, a new value is a removal and
an addition, the same content held differently is a change."""

from __future__ import annotations

from engram.generations.diff import DiffBelief, Side, diff_generations


def belief(
    principal: str, content: str, *, status: str = "active", confidence: float = 0.55
) -> DiffBelief:
    relation = content.split(":")[0]
    return DiffBelief("t", principal, content, relation, f"statement {content}", status, confidence)


def test_identical_generations_differ_in_nothing() -> None:
    side = Side((belief("ana", "lives_in:lisbon"),), {"pii": 2})
    found = diff_generations(side, side)
    assert found.empty
    assert found.principals == {"t/ana": (1, 1)}


def test_content_only_in_b_is_added_and_content_only_in_a_is_removed() -> None:
    a = Side((belief("ana", "works_at:acme"), belief("ana", "lives_in:lisbon")))
    b = Side((belief("ana", "lives_in:lisbon"), belief("bob", "uses:vim")))
    found = diff_generations(a, b)
    assert [x.content_hash for x in found.removed] == ["works_at:acme"]
    assert [x.content_hash for x in found.added] == ["uses:vim"]
    assert found.changed == []
    assert found.principals == {"t/ana": (2, 1), "t/bob": (0, 1)}


def test_the_same_content_with_another_status_or_confidence_is_changed() -> None:
    a = Side((belief("ana", "owns:bike"), belief("ana", "uses:vim", confidence=0.5)))
    b = Side(
        (belief("ana", "owns:bike", status="retracted"), belief("ana", "uses:vim", confidence=0.4))
    )
    found = diff_generations(a, b)
    assert [(c.before.status, c.after.status) for c in found.changed] == [
        ("active", "retracted"),
        ("active", "active"),
    ]
    assert found.added == [] and found.removed == []


def test_the_same_content_of_two_principals_is_two_beliefs() -> None:
    a = Side((belief("ana", "prefers:tea"),))
    b = Side((belief("bob", "prefers:tea"),))
    found = diff_generations(a, b)
    assert [x.principal for x in found.removed] == ["ana"]
    assert [x.principal for x in found.added] == ["bob"]


def test_refusals_are_compared_as_counts_by_reason() -> None:
    found = diff_generations(Side((), {"pii": 2}), Side((), {"pii": 2, "unmapped_relation": 3}))
    assert found.refusals == {"pii": (2, 2), "unmapped_relation": (0, 3)}
    assert not found.empty
    assert found.as_json()["refusals"] == {
        "pii": {"a": 2, "b": 2},
        "unmapped_relation": {"a": 0, "b": 3},
    }
