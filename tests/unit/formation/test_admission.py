"""Admission: the six ordered checks of seed 003, each refusal under its most specific reason."""

from __future__ import annotations

from dataclasses import replace

import pytest

from engram.formation.admission import Admitted, MessageAdmission, Refused
from engram.formation.proposals import UNRESOLVABLE_TERMS, Proposal
from engram.schemas.claims import EndKind, RefusalReason

CONTENT = "I live in Berlin. I built the dashboard. Zoë wohnt in Zürich."


def proposal(**overrides: str | None) -> Proposal:
    fields: dict[str, str | None] = {
        "subject": "I",
        "relation": "lives_in",
        "object": "Berlin",
        "quote": "I live in Berlin",
        "polarity": "assert",
        "tense": "present",
    }
    fields.update(overrides)
    return Proposal(extractor="test@1", **fields)  # type: ignore[arg-type]


def check(p: Proposal, content: str = CONTENT) -> Admitted | Refused:
    return MessageAdmission(content, project="proj", unresolvable_terms=UNRESOLVABLE_TERMS).check(p)


def reason(p: Proposal, content: str = CONTENT) -> RefusalReason | None:
    verdict = check(p, content)
    return verdict.reason if isinstance(verdict, Refused) else None


def test_a_well_formed_proposal_is_admitted_with_the_speaker_end() -> None:
    verdict = check(proposal())
    assert isinstance(verdict, Admitted)
    assert verdict.subject.kind is EndKind.SPEAKER
    assert verdict.object.kind is EndKind.ENTITY


def test_a_relation_outside_the_vocabulary_is_unmapped() -> None:
    assert reason(proposal(relation="resides_in")) is RefusalReason.UNMAPPED_RELATION


@pytest.mark.parametrize("subject", ["she", "They", "  ", "the user"])
def test_a_subject_that_names_nothing_is_unresolvable(subject: str) -> None:
    assert reason(proposal(subject=subject)) is RefusalReason.UNRESOLVABLE_SUBJECT


def test_a_quote_not_in_the_message_is_unlocatable() -> None:
    assert reason(proposal(quote="I reside in Berlin")) is RefusalReason.UNLOCATABLE_QUOTE


def test_a_quote_in_the_wrong_case_is_unlocatable() -> None:
    assert reason(proposal(quote="i live in berlin")) is RefusalReason.UNLOCATABLE_QUOTE


def test_a_quote_with_different_whitespace_is_located() -> None:
    assert isinstance(check(proposal(quote="I  live\tin Berlin")), Admitted)


@pytest.mark.parametrize("polarity", ["deny", "hedge", None, "maybe"])
def test_anything_but_assert_or_retract_is_not_asserted(polarity: str | None) -> None:
    assert reason(proposal(polarity=polarity)) is RefusalReason.NOT_ASSERTED


@pytest.mark.parametrize("tense", ["future", "hypothetical", None, "now"])
def test_a_state_neither_present_nor_past_is_not_current(tense: str | None) -> None:
    assert reason(proposal(tense=tense)) is RefusalReason.NOT_CURRENT


def test_a_past_event_is_kept_as_it_happened() -> None:
    event = proposal(relation="created", object="dashboard", quote="I built the dashboard")
    verdict = check(replace(event, tense="past"))
    assert isinstance(verdict, Admitted)
    assert verdict.tense == "past" and not verdict.past_state


def test_a_past_state_is_kept_as_history() -> None:
    """A past state ("I used to live in Berlin"): a state that held and ended is a fact with an end."""
    verdict = check(proposal(tense="past"))
    assert isinstance(verdict, Admitted)
    assert verdict.tense == "past" and verdict.past_state


def test_a_past_status_is_not_kept() -> None:
    """A thing's status that has passed ("the build was broken") is worth nothing as history."""
    p = proposal(subject="the build", relation="has_status", object="broken", quote="I live")
    assert reason(replace(p, tense="past")) is RefusalReason.NOT_CURRENT


def test_a_past_state_retracted_is_a_retraction_now() -> None:
    """A past state retracted ("I lost my job in Berlin"): the state has ended, "no longer"."""
    verdict = check(proposal(tense="past", polarity="retract"))
    assert isinstance(verdict, Admitted)
    assert verdict.tense == "present" and not verdict.past_state


PLANS = "I am going to learn the cello. We will ship it on 2027-01-04. I'll run for council."


@pytest.mark.parametrize(
    ("relation", "obj", "quote"),
    [
        ("intends_to", "learn the cello", "I am going to learn the cello"),
        ("committed_to", "run for council", "I'll run for council"),
        ("scheduled_for", "2027-01-04", "We will ship it on 2027-01-04"),
        ("due_on", "2027-01-04", "We will ship it on 2027-01-04"),
    ],
)
def test_a_plan_told_in_the_future_is_held_now(relation: str, obj: str, quote: str) -> None:
    """An intention, a decision, a plan's date or a deadline is held now about a later time."""
    verdict = check(proposal(relation=relation, object=obj, quote=quote, tense="future"), PLANS)
    assert isinstance(verdict, Admitted)
    assert verdict.tense == "present"


def test_a_future_state_that_is_not_a_plan_is_not_current() -> None:
    p = proposal(relation="has_role", object="council member", quote="I'll run for council")
    assert reason(replace(p, tense="future"), PLANS) is RefusalReason.NOT_CURRENT
    wish = proposal(relation="intends_to", object="cello", quote="learn the cello")
    assert reason(replace(wish, tense="hypothetical"), PLANS) is RefusalReason.NOT_CURRENT


def test_the_same_claim_twice_in_one_message_is_a_duplicate() -> None:
    admission = MessageAdmission(CONTENT, project="proj", unresolvable_terms=UNRESOLVABLE_TERMS)
    assert isinstance(admission.check(proposal()), Admitted)
    again = admission.check(proposal(subject="my", object="  berlin"))
    assert isinstance(again, Refused) and again.reason is RefusalReason.DUPLICATE_CLAIM


def test_a_retraction_is_not_a_duplicate_of_the_assertion() -> None:
    admission = MessageAdmission(CONTENT, project="proj", unresolvable_terms=UNRESOLVABLE_TERMS)
    assert isinstance(admission.check(proposal()), Admitted)
    assert isinstance(admission.check(proposal(polarity="retract")), Admitted)


def test_checks_apply_in_order_and_stop_at_the_first_failure() -> None:
    p = proposal(relation="nope", subject="she", quote="absent", polarity=None, tense=None)
    assert reason(p) is RefusalReason.UNMAPPED_RELATION
    p = proposal(subject="she", quote="absent", polarity=None)
    assert reason(p) is RefusalReason.UNRESOLVABLE_SUBJECT
    assert reason(proposal(quote="absent", polarity=None)) is RefusalReason.UNLOCATABLE_QUOTE
    assert reason(proposal(polarity=None, tense=None)) is RefusalReason.NOT_ASSERTED


def test_spans_are_bytes_for_non_ascii_content() -> None:
    p = proposal(subject="Zoë", quote="Zoë wohnt in Zürich", object="Zürich")
    verdict = check(p)
    assert isinstance(verdict, Admitted)
    assert verdict.span.start == len(CONTENT[: CONTENT.index("Zoë")].encode())
    assert verdict.span.end == len(CONTENT.encode()) - 1


def test_a_project_term_binds_to_the_project() -> None:
    content = "we decided to ship on Mondays"
    p = proposal(subject="we", relation="committed_to", object="ship on Mondays", quote=content)
    verdict = check(p, content)
    assert isinstance(verdict, Admitted)
    assert (verdict.subject.kind, verdict.subject.text) == (EndKind.PROJECT, "proj")


def test_an_end_too_long_to_be_a_name_is_refused_not_crashed_on() -> None:
    from engram.formation.admission import MessageAdmission, Refused
    from engram.formation.proposals import Proposal

    content = "I use " + "x" * 5000
    admission = MessageAdmission(content, project="p", unresolvable_terms=frozenset())
    verdict = admission.check(Proposal("I", "uses", "x" * 5000, content, "assert", "present", "t"))
    assert isinstance(verdict, Refused) and verdict.reason == "entity_name_limit"


def test_an_object_that_names_nothing_is_refused_not_crashed_on() -> None:
    from engram.formation.admission import MessageAdmission, Refused
    from engram.formation.proposals import Proposal

    admission = MessageAdmission("I use it.", project="p", unresolvable_terms=frozenset())
    verdict = admission.check(Proposal("I", "uses", "   ", "I use it", "assert", "present", "t"))
    assert isinstance(verdict, Refused) and verdict.reason == "unresolvable_subject"


def test_a_relation_the_policy_disables_is_refused_as_unmapped() -> None:
    enabled = frozenset({"owns"})
    admission = MessageAdmission(
        CONTENT, project="proj", unresolvable_terms=UNRESOLVABLE_TERMS, enabled_relations=enabled
    )
    verdict = admission.check(proposal())
    assert isinstance(verdict, Refused)
    assert (verdict.reason, verdict.detail) == (
        RefusalReason.UNMAPPED_RELATION,
        "disabled by the policy",
    )


def test_a_relation_the_policy_enables_is_admitted() -> None:
    enabled = frozenset({"lives_in"})
    admission = MessageAdmission(
        CONTENT, project="proj", unresolvable_terms=UNRESOLVABLE_TERMS, enabled_relations=enabled
    )
    assert isinstance(admission.check(proposal()), Admitted)
