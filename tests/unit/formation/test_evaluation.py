"""Scoring an arm against labels: matching rules, arithmetic and the safety counts."""

from __future__ import annotations

import uuid
from pathlib import Path

import pytest

from engram.evaluation.corpus import Case, CorpusError, LabeledClaim, load_corpus
from engram.evaluation.scoring import (
    claim_matches,
    episode_for,
    evaluate_arm,
    normalise_end,
    score_case,
)
from engram.formation.deterministic.arm import deterministic_arm
from engram.formation.policy import FormationPolicy
from engram.formation.proposals import Proposal
from engram.schemas.claims import Authority, Candidate, ClaimEnd, EndKind, Portability, Tense
from engram.schemas.common import Polarity, Role
from engram.schemas.episodes import Message


def candidate(
    subject: ClaimEnd,
    relation: str,
    obj: ClaimEnd,
    *,
    quote: str = "I live in Berlin",
    start: int = 0,
    facet: str | None = None,
    polarity: Polarity = Polarity.ASSERT,
    authority: Authority = Authority.USER,
    ordinal: int = 0,
) -> Candidate:
    return Candidate(
        candidate_id=uuid.uuid4(),
        message_ordinal=ordinal,
        role=Role.USER,
        subject=subject,
        relation=relation,
        object=obj,
        facet=facet,
        polarity=polarity,
        tense=Tense.PRESENT,
        statement=f"{subject.text} {relation} {obj.text}",
        quote=quote,
        span_start=start,
        span_end=start + len(quote.encode()),
        belief_type="fact",
        cardinality="many",
        is_event=False,
        authority=authority,
        confidence=0.5,
        provisional=False,
        portability=Portability.CONTEXTUAL,
        scope="project:x",
        extractor="test@1",
    )


SPEAKER = ClaimEnd(kind=EndKind.SPEAKER, text="speaker")
PROJECT = ClaimEnd(kind=EndKind.PROJECT, text="proj")


def entity(text: str) -> ClaimEnd:
    return ClaimEnd(kind=EndKind.ENTITY, text=text)


def label(s: str, r: str, o: str, **kw: str) -> LabeledClaim:
    return LabeledClaim.model_validate({"subject": s, "relation": r, "object": o, **kw})


def case(content: str, expect: list[LabeledClaim], **kw: object) -> Case:
    return Case.model_validate(
        {"id": "c1", "messages": [{"role": "user", "content": content}], "expect": expect, **kw}
    )


@pytest.mark.parametrize(
    ("written", "normal"),
    [
        ("The  Migration.", "migration"),
        ("my old Dell laptop", "old dell laptop"),
        ("an iPad!", "ipad"),
        ("Our   Team", "team"),
    ],
)
def test_ends_are_compared_without_case_articles_possessives_or_punctuation(
    written: str, normal: str
) -> None:
    assert normalise_end(written) == normal


def test_a_speaker_end_matches_speaker_and_a_project_end_matches_project() -> None:
    home = candidate(SPEAKER, "lives_in", entity("Berlin"))
    assert claim_matches(home, label("speaker", "lives_in", "berlin"))
    assert not claim_matches(home, label("Speaker's", "lives_in", "Berlin"))
    decision = candidate(PROJECT, "committed_to", ClaimEnd(kind=EndKind.VALUE, text="ship it"))
    assert claim_matches(decision, label("project", "committed_to", "Ship it."))
    assert not claim_matches(decision, label("speaker", "committed_to", "ship it"))


def test_relation_and_polarity_must_be_exact() -> None:
    retract = candidate(SPEAKER, "owns", entity("car"), polarity=Polarity.RETRACT)
    assert not claim_matches(retract, label("speaker", "owns", "car"))
    assert claim_matches(retract, label("speaker", "owns", "my car", polarity="retract"))
    assert not claim_matches(retract, label("speaker", "has", "car", polarity="retract"))


def test_a_facet_is_compared_only_when_the_label_gives_one() -> None:
    tea = candidate(SPEAKER, "prefers", entity("tea"), facet="beverage")
    assert claim_matches(tea, label("speaker", "prefers", "tea"))
    assert claim_matches(tea, label("speaker", "prefers", "tea", facet="Beverage"))
    assert not claim_matches(tea, label("speaker", "prefers", "tea", facet="topic:tea"))


def test_precision_and_recall_count_matches_unexpected_and_allowed() -> None:
    content = "I live in Berlin"
    labels = [label("speaker", "lives_in", "Berlin"), label("speaker", "owns", "car")]
    c = case(content, labels, allow=[label("speaker", "speaks", "German")])
    formed = [
        candidate(SPEAKER, "lives_in", entity("Berlin")),
        candidate(SPEAKER, "speaks", entity("German")),
        candidate(SPEAKER, "uses", entity("Vim")),
    ]
    result = score_case(c, episode_for(c), formed)
    assert (result.matched, result.extracted, result.matched_labels) == (1, 2, 1)
    assert result.missing == ["speaker owns car"]
    assert result.unexpected == ["speaker uses Vim"]


def test_a_quote_not_at_its_byte_span_is_fabricated() -> None:
    c = case("I live in Berlin", [])
    honest = candidate(SPEAKER, "lives_in", entity("Berlin"))
    shifted = candidate(SPEAKER, "lives_in", entity("Berlin"), quote="I live in Paris")
    assert score_case(c, episode_for(c), [honest]).fabricated == []
    assert score_case(c, episode_for(c), [shifted]).fabricated == ["speaker lives_in Berlin"]


def test_a_forbidden_claim_is_counted_even_when_expected_elsewhere() -> None:
    c = case("I live in Berlin", [], forbid=[label("speaker", "lives_in", "Berlin")])
    result = score_case(c, episode_for(c), [candidate(SPEAKER, "lives_in", entity("Berlin"))])
    assert result.forbidden == ["speaker lives_in Berlin"]


def test_owner_authority_from_a_non_user_message_is_untrusted_owner() -> None:
    c = Case.model_validate(
        {"id": "c2", "messages": [{"role": "tool", "content": "I live in Berlin"}]}
    )
    formed = [candidate(entity("Ana"), "lives_in", entity("Berlin"), authority=Authority.USER)]
    assert score_case(c, episode_for(c), formed).untrusted_owner


def test_secret_shaped_text_in_a_candidate_is_counted() -> None:
    content = "my token: ghp_abcdefghijklmnopqrstuvwxyz0123456789"
    c = case(content, [])
    formed = [candidate(SPEAKER, "has_contact", entity("x"), quote=content)]
    assert score_case(c, episode_for(c), formed).secrets


def test_the_episode_for_a_case_is_the_same_every_time() -> None:
    c = case("I live in Berlin", [])
    assert episode_for(c) == episode_for(c)


async def test_an_arm_that_fails_is_reported_and_makes_the_report_not_ok() -> None:
    async def broken(message: Message) -> list[Proposal]:
        raise RuntimeError("model down")

    report = await evaluate_arm("broken", [case("I live in Berlin", [])], broken, FormationPolicy())
    assert report.errors == 1 and not report.ok


async def test_the_deterministic_arm_scores_a_tiny_corpus() -> None:
    cases = [
        case("I live in Berlin and I own a bike.", [label("speaker", "lives_in", "Berlin")]),
        Case.model_validate(
            {
                "id": "c3",
                "messages": [{"role": "user", "content": "I might move to Rome."}],
                "forbid": [{"subject": "speaker", "relation": "lives_in", "object": "Rome"}],
            }
        ),
    ]
    report = await evaluate_arm("deterministic", cases, deterministic_arm, FormationPolicy())
    assert report.ok
    assert (report.matched, report.extracted, report.expected) == (1, 2, 1)
    assert report.precision == 0.5 and report.recall == 1.0
    assert report.to_dict()["diffs"] == [{"case": "c1", "unexpected": ["speaker owns bike"]}]


def test_a_malformed_case_names_its_file_and_id(tmp_path: Path) -> None:
    corpus = tmp_path / "bad.yaml"
    corpus.write_text("- id: broken-one\n  messages: []\n", encoding="utf-8")
    with pytest.raises(CorpusError, match=r"bad\.yaml: case 'broken-one'"):
        load_corpus(tmp_path)


def test_a_folder_loads_every_yaml_file_and_rejects_repeated_ids(tmp_path: Path) -> None:
    one = "- id: a\n  messages: [{role: user, content: hi}]\n"
    (tmp_path / "one.yaml").write_text(one, encoding="utf-8")
    (tmp_path / "two.yml").write_text(one.replace("id: a", "id: b"), encoding="utf-8")
    assert [c.id for c in load_corpus(tmp_path)] == ["a", "b"]
    (tmp_path / "three.yaml").write_text(one, encoding="utf-8")
    with pytest.raises(CorpusError, match="repeats an id"):
        load_corpus(tmp_path)
