"""A model's date of an event is folded into the event's name, as the pattern arm's is."""

from __future__ import annotations

from engram.formation.event_dates import fold_event_dates
from engram.formation.merge import merge_proposals
from engram.formation.proposals import Proposal


def _p(subject: str, relation: str, obj: str, quote: str = "q") -> Proposal:
    return Proposal(subject, relation, obj, quote, "assert", "past", "model:m")


def _claims(proposals: list[Proposal]) -> list[tuple[str, str, str]]:
    return [(p.subject, p.relation, p.object) for p in proposals]


def test_a_date_of_a_claimed_event_names_the_event_and_forms_no_belief_of_its_own() -> None:
    folded = fold_event_dates(
        [
            _p("I", "participated_in", "a kite festival"),
            _p("the kite festival", "occurred_on", "2026-04-18"),
            _p("I", "prefers", "kites"),
        ]
    )
    assert _claims(folded) == [
        ("I", "participated_in", "a kite festival (2026-04-18)"),
        ("I", "prefers", "kites"),
    ]


def test_a_date_worded_otherwise_goes_to_the_messages_only_event() -> None:
    folded = fold_event_dates(
        [_p("I", "created", "my first quilt"), _p("finishing the quilt", "occurred_on", "2025")]
    )
    assert _claims(folded) == [("I", "created", "my first quilt (2025)")]


def test_a_date_with_no_event_to_go_to_stays_as_proposed() -> None:
    alone = [_p("the storm", "occurred_on", "2026-01-02")]
    assert fold_event_dates(alone) == alone
    two = [
        _p("I", "participated_in", "a regatta"),
        _p("I", "participated_in", "a book fair"),
        _p("the trip", "occurred_on", "2026-01-02"),
    ]
    assert fold_event_dates(two) == two


def test_an_event_already_dated_keeps_its_date_and_the_second_date_goes() -> None:
    folded = fold_event_dates(
        [
            _p("I", "participated_in", "a regatta (2026-05-02)"),
            _p("regatta", "occurred_on", "2026-05-02"),
        ]
    )
    assert _claims(folded) == [("I", "participated_in", "a regatta (2026-05-02)")]


def test_the_merge_folds_the_models_dates_and_matches_the_pattern_arms_event() -> None:
    patterns = [_p("I", "participated_in", "regatta (2026-05-02)")]
    model = [_p("I", "participated_in", "regatta"), _p("the regatta", "occurred_on", "2026-05-02")]
    assert _claims(merge_proposals(patterns, model)) == [
        ("I", "participated_in", "regatta (2026-05-02)")
    ]
