"""A model's proposals held to the principal and to one name per thing (issue 42, item 5).

Every claim here is written for this file, shaped as a model answers the extraction prompt."""

from __future__ import annotations

import pytest

from engram.formation.admission import Refused
from engram.formation.deterministic import propose
from engram.formation.model_claims import normal_object, shape_model_proposals
from engram.formation.proposals import Proposal
from engram.schemas.claims import RefusalReason
from tests.support.forming import episode, form, message

MODEL = "model:test"


def _claim(subject: str, relation: str, obj: str, quote: str = "x", **more: str) -> Proposal:
    return Proposal(
        subject=subject,
        relation=relation,
        object=obj,
        quote=quote,
        polarity=more.get("polarity", "assert"),
        tense=more.get("tense", "present"),
        extractor=more.get("extractor", MODEL),
        facet=more.get("facet"),
    )


@pytest.mark.parametrize(
    ("written", "normal"),
    [
        ("my dance studio", "dance studio"),
        ("my own dance studio", "dance studio"),
        ("My very own dance studio.", "dance studio"),
        ("reading fantasy books", "fantasy books"),
        ("watching old sci-fi movies", "old sci-fi movies"),
        ("listening to jazz records", "jazz records"),
        ("reading", "reading"),
        ("reading glasses", "reading glasses"),
        ("Tesla", "Tesla"),
        ("the  Lisbon  marathon", "Lisbon marathon"),
    ],
)
def test_an_object_has_one_normal_form_whatever_the_paraphrase(written: str, normal: str) -> None:
    assert normal_object(written) == normal


def test_a_thing_named_more_fully_in_the_same_message_is_one_claim_the_fullest() -> None:
    shaped = shape_model_proposals(
        [
            _claim("I", "owns", "my own studio"),
            _claim("I", "owns", "my own dance studio"),
            _claim("I", "owns", "a kayak"),
        ]
    )
    kept = [p.object for p in shaped if isinstance(p, Proposal)]
    assert kept == ["dance studio", "kayak"]
    refused = [p for p in shaped if isinstance(p, Refused)]
    assert [r.reason for r in refused] == [RefusalReason.DUPLICATE_CLAIM]
    assert "dance studio" in refused[0].detail


def test_a_thing_named_inside_another_after_a_preposition_is_another_thing() -> None:
    shaped = shape_model_proposals(
        [
            _claim("I", "participated_in", "speech at my cousin's wedding", tense="past"),
            _claim("I", "participated_in", "cousin's wedding", tense="past"),
        ]
    )
    assert all(isinstance(p, Proposal) for p in shaped)


def test_paraphrases_across_messages_become_the_same_claim() -> None:
    one = shape_model_proposals([_claim("I", "prefers", "fantasy books", facet="genre")])
    two = shape_model_proposals([_claim("I", "prefers", "reading fantasy books", facet="genre")])
    assert [p.object for p in one if isinstance(p, Proposal)] == [
        p.object for p in two if isinstance(p, Proposal)
    ]


@pytest.mark.parametrize(
    "obj", ["that event", "an event", "it", "this", "the thing", "these friends"]
)
def test_a_vague_referent_is_refused_with_why(obj: str) -> None:
    (shaped,) = shape_model_proposals([_claim("I", "participated_in", obj, tense="past")])
    assert isinstance(shaped, Refused)
    assert shaped.reason is RefusalReason.UNRESOLVABLE_SUBJECT
    assert "points at something" in shaped.detail


@pytest.mark.parametrize(
    ("subject", "relation", "obj"),
    [
        ("Lisbon", "located_in", "Portugal"),
        ("the lead actor", "prefers", "surfing"),
        ("Tom", "works_at", "a bank"),
        ("Biscuit", "prefers", "carrots"),
    ],
)
def test_a_fact_of_someone_or_something_else_is_refused_with_why(
    subject: str, relation: str, obj: str
) -> None:
    (shaped,) = shape_model_proposals([_claim(subject, relation, obj)])
    assert isinstance(shaped, Refused)
    assert shaped.reason is RefusalReason.NOT_SPOKEN_BY_PRINCIPAL
    assert "not of the principal" in shaped.detail


def test_a_thing_of_the_speakers_is_kept_as_the_speakers_relation_to_it() -> None:
    (car,) = shape_model_proposals([_claim("my car", "has_status", "broken down")])
    assert isinstance(car, Proposal)
    assert (car.subject, car.relation, car.object) == ("I", "owns", "car")
    (sister,) = shape_model_proposals([_claim("my sister", "lives_in", "Oslo")])
    assert isinstance(sister, Proposal)
    assert (sister.relation, sister.object, sister.facet) == ("related_to", "sister", "sister")


def test_the_project_and_event_dates_are_left_as_they_are() -> None:
    shaped = shape_model_proposals(
        [
            _claim("we", "committed_to", "ship on Fridays"),
            _claim("the book fair", "occurred_on", "2024-05-04"),
        ]
    )
    assert all(isinstance(p, Proposal) for p in shaped)


def test_the_pattern_arms_proposals_are_untouched() -> None:
    proposals = propose("I love my own dance studio. Lisbon is lovely.")
    assert shape_model_proposals(proposals) == proposals


def test_in_the_core_every_proposal_has_one_outcome_and_the_refusal_says_why() -> None:
    content = "My car broke down again, and I finally opened my own dance studio downtown!"
    proposals = [
        _claim("my car", "has_status", "broken down", quote="My car broke down again"),
        _claim("I", "owns", "my own studio", quote="I finally opened my own dance studio"),
        _claim("I", "owns", "my own dance studio", quote="I finally opened my own dance studio"),
        _claim("Downtown", "located_in", "the city", quote="downtown"),
    ]
    batch = form(episode(message(content)), by_message={0: proposals})
    assert batch.counts.proposed == batch.counts.admitted + batch.counts.refused
    assert {c.statement for c in batch.candidates} == {
        "speaker owns car",
        "speaker owns dance studio",
    }
    assert sorted(r.reason.value for r in batch.refusals) == [
        "duplicate_claim",
        "not_spoken_by_principal",
    ]


def test_we_is_the_project_only_for_the_projects_kinds_of_claim() -> None:
    decided, outing, taste, other = shape_model_proposals(
        [
            _claim("we", "committed_to", "ship on Fridays"),
            _claim("we", "participated_in", "camping trip", tense="past"),
            _claim("we", "prefers", "old films at Christmas"),
            _claim("we", "lives_in", "a small flat"),
        ]
    )
    assert isinstance(decided, Proposal) and decided.subject == "we"
    assert isinstance(outing, Proposal) and outing.subject == "I"
    assert isinstance(taste, Proposal) and taste.subject == "I"
    assert isinstance(other, Refused)
    assert other.reason is RefusalReason.NOT_SPOKEN_BY_PRINCIPAL


def test_a_pointing_word_before_a_name_goes_from_the_normal_form() -> None:
    (meeting,) = shape_model_proposals(
        [_claim("I", "participated_in", "that community meeting", tense="past")]
    )
    assert isinstance(meeting, Proposal) and meeting.object == "community meeting"


def test_a_work_of_the_speakers_is_the_speakers_work_its_state_stays_the_works() -> None:
    kind, state = shape_model_proposals(
        [_claim("my novel", "instance_of", "a thriller"), _claim("my novel", "has_status", "done")]
    )
    assert isinstance(kind, Proposal)
    assert (kind.subject, kind.relation, kind.object) == ("I", "responsible_for", "novel")
    assert isinstance(state, Proposal)
    assert (state.subject, state.relation) == ("my novel", "has_status")


def test_the_state_of_a_piece_of_work_and_a_relation_to_the_principal_are_kept() -> None:
    shaped = shape_model_proposals(
        [
            _claim("The migration", "has_status", "done"),
            _claim("The release", "blocked_by", "QA sign-off"),
            _claim("Priya", "manages", "me"),
            _claim("my 18th birthday", "occurred_on", "2015"),
        ]
    )
    assert all(isinstance(p, Proposal) for p in shaped)


@pytest.mark.parametrize(
    ("obj", "provisional"),  # told in the past: "I went to the … last week"
    [
        ("handing out blankets at the shelter", True),
        ("first call-out", True),
        ("meaningful afternoon at the memorial", True),
        ("book fair", False),
        ("pottery workshop", False),
        ("hiking", False),
        ("kayaking at the lake", False),
        ("trip to Lisbon", False),
        ("kickboxing", False),
        ("horseback riding with my dad", False),
        ("community meetings", False),
    ],
)
def test_a_one_off_event_is_kept_provisional_a_known_kind_of_event_is_not(
    obj: str, provisional: bool
) -> None:
    content = f"I went to the {obj} last week."
    proposals = [_claim("I", "participated_in", obj, quote=content, tense="past")]
    (formed,) = form(episode(message(content)), by_message={0: proposals}).candidates
    assert formed.provisional is provisional
