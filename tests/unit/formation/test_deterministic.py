"""The deterministic extractor: independent, span-verifiable candidates from plain patterns."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from engram.formation.deterministic import propose
from engram.formation.deterministic.clauses import split_clauses
from engram.formation.policy import DETERMINISTIC_EXTRACTOR, FormationPolicy
from engram.formation.proposals import Proposal
from engram.formation.spans import quote_at
from engram.schemas.claims import ClaimsBatchFormed, EndKind, Tense
from engram.schemas.common import Role
from tests.support.forming import episode, message
from tests.support.forming import form as form_with


def claims(content: str) -> set[tuple[str, str, str, str | None, str | None, str | None]]:
    return {
        (p.subject, p.relation, p.object, p.facet, p.polarity, p.tense) for p in propose(content)
    }


def admitted(content: str) -> set[tuple[str, str, str]]:
    return {(p.subject, p.relation, p.object) for p in propose(content) if _is_admissible(p)}


def _is_admissible(p: Proposal) -> bool:
    return p.polarity in {"assert", "retract"} and p.tense == "present"


def form(content: str, role: Role = Role.USER) -> ClaimsBatchFormed:
    return form_with(
        episode(message(content, role), occurred_at=datetime(2024, 5, 1, tzinfo=UTC)),
        by_message={0: propose(content)},
    )


SAMPLES = [
    "I have a Garmin watch and a Tesla",
    "I no longer have my watch and my car",
    "I prefer tea and we decided to deploy Fridays",
    "Ich heiße Zoë, I live in Zürich",
    "My name is Priya, my timezone is IST and I prefer short replies.",
    "I\u2019ve got a Steam Deck   now, and I\u2019m a data engineer at Spotify!",
    "My kids Tom and Eva start school in September; the migration is done.",
]


@pytest.mark.parametrize("content", SAMPLES)
def test_every_quote_is_an_exact_substring_of_the_content(content: str) -> None:
    for proposal in propose(content):
        assert proposal.quote in content
        assert proposal.extractor == DETERMINISTIC_EXTRACTOR


@pytest.mark.parametrize("content", SAMPLES)
def test_every_formed_candidate_cites_its_own_bytes(content: str) -> None:
    for candidate in form(content).candidates:
        assert quote_at(content, candidate.span_start, candidate.span_end) == candidate.quote


def test_a_coordinated_possessive_yields_one_claim_per_owned_thing() -> None:
    assert admitted("I have a Garmin watch and a Tesla") == {
        ("I", "owns", "Garmin watch"),
        ("I", "owns", "Tesla"),
    }


def test_a_coordinated_retraction_retracts_each_thing_and_asserts_none() -> None:
    proposals = propose("I no longer have my watch and my car")
    assert {(p.object, p.polarity) for p in proposals} == {("watch", "retract"), ("car", "retract")}
    assert all(p.relation == "owns" for p in proposals)


def test_a_retraction_with_anymore_retracts_the_home() -> None:
    assert ("I", "lives_in", "Cork", None, "retract", "present") in claims(
        "I don't live in Cork anymore"
    )


def test_a_preference_and_a_decision_in_one_sentence_stay_separate() -> None:
    proposals = propose("I prefer tea and we decided to deploy Fridays")
    assert {(p.subject, p.relation, p.object) for p in proposals} == {
        ("I", "prefers", "tea"),
        ("we", "committed_to", "deploy Fridays"),
    }
    assert {p.quote for p in proposals} == {"I prefer tea", "we decided to deploy Fridays"}


@pytest.mark.parametrize(
    ("content", "obj", "facet"),
    [
        ("I prefer concise answers", "concise answers", "answer style"),
        ("I prefer dark mode", "dark mode", "interface theme"),
        ("I use tabs for indentation", "tabs", "indentation style"),
        ("Please always use metric units", "metric units", "measurement units"),
        ("My favourite editor is Helix", "Helix", "editor"),
        ("I love coffee", "coffee", "beverage"),
        ("I like bouldering", "bouldering", "topic:bouldering"),
    ],
)
def test_a_preference_is_filed_under_a_facet_from_the_closed_map(
    content: str, obj: str, facet: str
) -> None:
    assert ("I", "prefers", obj, facet, "assert", "present") in claims(content)


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        ("My name is Ana", ("I", "has_name", "Ana")),
        ("call me Sam", ("I", "has_name", "Sam")),
        ("I moved to Berlin", ("I", "lives_in", "Berlin")),
        ("I work for Acme", ("I", "works_at", "Acme")),
        ("I'm a data engineer", ("I", "has_role", "data engineer")),
        ("I work as a nurse", ("I", "has_role", "nurse")),
        ("my timezone is CET", ("I", "has_timezone", "CET")),
        ("I'm in UTC+2", ("I", "has_timezone", "UTC+2")),
        ("my sister Anna", ("I", "related_to", "Anna")),
        ("my manager is Bo", ("Bo", "manages", "I")),
        ("my colleague Bo", ("I", "works_with", "Bo")),
        ("we'll use Postgres for the queue", ("we", "committed_to", "use Postgres for the queue")),
        ("the migration is done", ("the migration", "has_status", "done")),
        ("I finished the migration", ("the migration", "has_status", "done")),
    ],
)
def test_each_family_has_a_fixed_mapping(content: str, expected: tuple[str, str, str]) -> None:
    assert expected in admitted(content)


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        ("Spanish is my first language.", {("I", "speaks", "Spanish")}),
        (
            "Portuguese and English are my native languages.",
            {("I", "speaks", "Portuguese"), ("I", "speaks", "English")},
        ),
        ("Everyone calls me Jay.", {("I", "has_name", "Jay")}),
        ("They call me Jay.", {("I", "has_name", "Jay")}),
        ("Berlin has been home for five years now.", {("I", "lives_in", "Berlin")}),
        ("Lisbon is my home these days.", {("I", "lives_in", "Lisbon")}),
    ],
)
def test_inverted_copulas_and_names_others_use(
    content: str, expected: set[tuple[str, str, str]]
) -> None:
    assert admitted(content) == expected


@pytest.mark.parametrize(
    "content",
    [
        "Berlin is home to many startups.",
        "This is home, more or less.",
        "Home is where the heart is.",
        "She calls me every day.",
        "Everybody calls me by my surname.",
        "Is Spanish your first language?",
        "Maybe Berlin will be home one day.",
    ],
)
def test_look_alikes_of_those_form_nothing(content: str) -> None:
    assert admitted(content) == set()


def test_a_home_that_no_longer_is_retracts_it() -> None:
    assert ("I", "lives_in", "Cork", None, "retract", "present") in claims(
        "Cork is no longer home."
    )


def test_two_languages_are_two_claims() -> None:
    assert admitted("I speak Portuguese and German") == {
        ("I", "speaks", "Portuguese"),
        ("I", "speaks", "German"),
    }


@pytest.mark.parametrize(
    "content",
    [
        "Do I prefer tea?",
        "My friend said she lives in Rome",
        "He told me I should use tabs",
        "I would like to learn Rust",
        "I wish I had a boat",
        "I like it",
        "I have a question about Kafka",
        "Thanks, that's helpful!",
    ],
)
def test_questions_reported_speech_and_wishes_propose_nothing(content: str) -> None:
    assert propose(content) == []


@pytest.mark.parametrize(
    ("content", "polarity", "tense"),
    [
        ("I think I might move to Berlin", "hedge", "future"),
        ("I don't own a car", "deny", "present"),
        ("I used to live in Cork", "assert", "past"),
        ("I lived in Cork", "assert", "past"),
        ("If I lived in Paris, I would cycle", "assert", "hypothetical"),
        ("I'm moving to Lisbon next month", "assert", "future"),
    ],
)
def test_unasserted_or_past_claim_shapes_are_proposed_so_admission_refuses_them(
    content: str, polarity: str, tense: str
) -> None:
    proposals = [p for p in propose(content) if p.relation != "intends_to"]
    assert proposals, "a clear claim shape is proposed so its refusal keeps its words"
    assert {(p.polarity, p.tense) for p in proposals} == {(polarity, tense)}
    # a plan with its time is the speaker's plan now ("move to Lisbon"), never where they live;
    # a past state is kept as history, never as where they live now
    current = [c for c in form(content).candidates if c.tense is Tense.PRESENT]
    assert [c.relation for c in current] in ([], ["intends_to"])


def test_a_past_event_is_admitted_and_a_past_state_kept_as_history() -> None:
    assert [c.relation for c in form("I built the onboarding dashboard").candidates] == ["created"]
    [kept] = form("I lived in Cork").candidates
    assert (kept.relation, kept.tense, kept.cardinality) == ("lives_in", Tense.PAST, "many")
    assert kept.statement == "speaker used to lives in Cork"


def test_non_ascii_text_gets_correct_byte_spans_after_admission() -> None:
    content = "Ich heiße Zoë, I live in Zürich"
    batch = form(content)
    by_relation = {c.relation: c for c in batch.candidates}
    assert set(by_relation) == {"has_name", "lives_in"}
    home = by_relation["lives_in"]
    assert home.quote == "I live in Zürich"
    assert home.span_start == len("Ich heiße Zoë, ".encode())
    assert home.span_end == len(content.encode())
    assert by_relation["has_name"].object.text == "Zoë"


def test_first_person_claims_from_an_assistant_form_nothing() -> None:
    batch = form("I live in Seattle and I love hiking", role=Role.ASSISTANT)
    assert batch.candidates == []
    assert batch.refusals


def test_a_project_decision_binds_to_the_project() -> None:
    (candidate,) = form("We decided to deploy on Fridays.").candidates
    assert candidate.subject.kind is EndKind.PROJECT
    assert candidate.object.text == "deploy on Fridays"


def test_the_scan_ceiling_is_the_policys_and_stops_proposals_for_one_message() -> None:
    content = ". ".join(f"I own a gadget number {i}" for i in range(400))
    assert len(propose(content)) == FormationPolicy().scan_ceiling == 256
    assert len(propose(content, ceiling=10)) == 10


def test_clauses_split_at_new_subjects_but_not_inside_an_object_list() -> None:
    texts = [c.text for c in split_clauses("I have a watch and a car, and we chose Kafka.")]
    assert texts == ["I have a watch and a car", "we chose Kafka"]


def test_proposals_are_deterministic() -> None:
    content = SAMPLES[4]
    assert propose(content) == propose(content)
