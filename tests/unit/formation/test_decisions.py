"""Project decisions: a clause that does not open with the subject is not read for one."""

from __future__ import annotations

from engram.formation.deterministic import decisions


def test_every_decision_pattern_opens_with_the_subject_the_early_exit_checks() -> None:
    """``propose_decision`` returns early unless the clause opens with "we" / "the team" /
    "our team"; that may skip no pattern, so every one of them must start with that subject."""
    patterns = [pattern for pattern, _, _ in decisions._COMPILED] + [decisions._HEDGES]
    assert patterns
    for pattern in patterns:
        assert pattern.pattern.startswith(decisions._SUBJECT), pattern.pattern
        assert pattern.flags == decisions._OPENS_WITH_SUBJECT.flags


def test_a_team_decision_still_forms_and_other_clauses_form_none() -> None:
    assert decisions.propose_decision("We decided to deploy on Fridays")
    assert decisions.propose_decision("The team will use Postgres")
    assert not decisions.propose_decision("I decided to deploy on Fridays")
