"""Recall's pure parts: reciprocal rank fusion, the query's checks, the message ids in cursors."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime

import pytest

from engram.projections.reads.fusion import K, combine, fuse, ranks, with_neighbours
from engram.projections.reads.recall import (
    answering,
    check_recall_query,
    message_uuid,
    rank_messages,
    supported,
)
from engram.projections.reads.search import UnsearchableQuery
from engram.schemas.api import BeliefView, EvidenceView


def test_one_list_keeps_its_order_with_reciprocal_scores() -> None:
    assert fuse([["a", "b", "c"]]) == [("a", 1 / (K + 1)), ("b", 1 / (K + 2)), ("c", 1 / (K + 3))]


def test_an_item_two_lists_agree_on_outranks_the_top_of_one() -> None:
    fused = [item for item, _ in fuse([["a", "b"], ["c", "b"]])]
    assert fused == ["b", "a", "c"]


def test_ties_keep_the_order_of_first_appearance_and_duplicates_count_once() -> None:
    assert [i for i, _ in fuse([["x", "x"], ["y"]])] == ["x", "y"]
    assert fuse([["x", "x"]]) == [("x", 1 / (K + 1))]
    assert fuse([]) == []


def test_k_must_be_positive() -> None:
    with pytest.raises(ValueError, match="k must be at least 1"):
        fuse([["a"]], k=0)


def test_ranks_count_from_one_at_the_first_place() -> None:
    assert ranks(["a", "b", "a"]) == {"a": 1, "b": 2}


def _belief(*quotes: tuple[uuid.UUID, int]) -> BeliefView:
    """A belief quoting ``quotes``; only its evidence matters to :func:`supported`."""
    at = datetime(2026, 1, 1, tzinfo=UTC)
    evidence = [
        EvidenceView(
            episode_id=e, message_ordinal=o, role="user", quote="q", span_start=0, span_end=1,
            extractor="deterministic", source_partition=0, source_offset=0, occurred_at=at,
        )
        for e, o in quotes
    ]  # fmt: skip
    return BeliefView(
        belief_id=uuid.uuid4(), statement="s", readable="s", subject="ana", relation="likes",
        object="tea", facet=None, belief_type="preference", polarity="positive",
        authority="stated", scope="global", origin_scopes=[], portability="portable",
        sensitivity=[], confidence=0.9, effective_confidence=0.9, last_reinforced_at=at,
        status="active", corroboration=1, valid_from=at, valid_to=None, known_from=at,
        known_to=None, superseded_by=None, conflicts_with=[], flagged_for_review=False,
        excluded_scopes=[], policy_version="p", content_hash=None, evidence=evidence,
    )  # fmt: skip


def test_a_belief_is_shown_only_when_a_message_it_quotes_ranks_near_the_top() -> None:
    e = uuid.UUID(int=1)
    near, far, both, none = _belief((e, 1)), _belief((e, 9)), _belief((e, 9), (e, 0)), _belief()
    first, indexed = [(e, 0), (e, 1), (e, 2)], {(e, 0), (e, 1), (e, 2), (e, 9)}
    assert supported([far, near, both], first, indexed) == [near, both], "in the beliefs' order"
    assert supported([near], [], indexed) == [], "its source not ranked near the top: hidden"
    told = _belief((uuid.UUID(int=2), 0))
    assert supported([told, none], first, indexed) == [told, none], (
        "a belief quoting nothing the messages' ranking could hold is not judged by it"
    )


def test_quoted_messages_are_not_raised_for_the_beliefs_sake() -> None:
    e = uuid.UUID(int=1)
    lexical = [((e, 0), 3.0), ((e, 1), 2.0), ((e, 2), 1.0)]
    assert [m for m, _ in rank_messages(lexical)] == [(e, 0), (e, 1), (e, 2)]


def test_a_message_id_is_stable_and_distinct_per_ordinal() -> None:
    e = uuid.UUID(int=7)
    assert message_uuid(e, 0) == message_uuid(e, 0) != message_uuid(e, 1)
    assert message_uuid(e, 0) != message_uuid(uuid.UUID(int=8), 0)


@pytest.mark.parametrize("bad", ["what\x1b[2J is it", "a\x07b", "tab\x00nul", " ", "x" * 257])
def test_control_characters_blank_and_huge_queries_are_refused_by_name(bad: str) -> None:
    with pytest.raises(UnsearchableQuery):
        check_recall_query(bad)


def test_tabs_and_line_breaks_are_text() -> None:
    assert check_recall_query(" where\tdo I\nlive? ") == "where\tdo I\nlive?"


def test_a_belief_answers_with_two_terms_or_the_rarest_one() -> None:
    a, b, c, d = (uuid.UUID(int=i) for i in range(4))
    idf = {"live": 0.5, "japan": 2.0, "bring": 3.0}
    matched = {a: ["live"], b: ["live", "japan"], c: ["bring"], d: ["japan", "japan"]}
    assert answering(matched, idf) == {b, c}
    assert answering({a: ["lisbon"], b: ["tea"]}, {"lisbon": 0.69, "tea": 0.69}) == {a, b}
    assert answering({a: ["tea"]}, {"tea": 0.1}) == {a}  # a one-term question
    assert answering({a: ["tea"]}, {}) == set()


def test_a_list_weighted_below_one_counts_for_less_and_weights_must_match_the_lists() -> None:
    fused = dict(fuse([["a"], ["b"]], weights=[1.0, 0.5]))
    assert fused == {"a": 1 / (K + 1), "b": 0.5 / (K + 1)}
    with pytest.raises(ValueError, match="one non-negative number per list"):
        fuse([["a"], ["b"]], weights=[1.0])
    with pytest.raises(ValueError, match="one non-negative number per list"):
        fuse([["a"]], weights=[-1.0])


def test_the_semantic_list_adds_what_words_miss_below_what_words_and_meaning_agree_on() -> None:
    e = uuid.UUID(int=1)
    lexical = [((e, 0), 4.0), ((e, 1), 3.0)]
    semantic = [((e, 2), 0.9), ((e, 1), 0.8), ((e, 3), 0.5)]
    order = [m for m, _ in rank_messages(lexical, semantic, semantic_weight=0.5)]
    assert order == [(e, 1), (e, 0), (e, 2), (e, 3)], "both lists first, then the lexical top"
    no_meaning = [m for m, _ in rank_messages(lexical)]
    assert no_meaning == [(e, 0), (e, 1)], "no semantic list: by words"


def test_scores_are_combined_scaled_within_their_lists() -> None:
    combined = dict(
        combine([("a", 8.0), ("b", 2.0)], [("b", 0.9), ("c", 0.7), ("d", 0.5)], semantic_weight=1.0)
    )
    assert combined == pytest.approx({"a": 1.0, "b": 0.25 + 1.0, "c": 0.5, "d": 0.0})
    assert combine([], [("x", 0.3)], semantic_weight=0.5) == [("x", 0.5)], "one hit counts whole"
    assert combine([("a", 0.0)], [], semantic_weight=1.0) == [], "no shared word scores nothing"


def test_a_message_of_the_period_a_question_names_comes_before_an_equal_one() -> None:
    e = uuid.UUID(int=1)
    lexical = [((e, 0), 2.0), ((e, 1), 2.0)]
    assert [m for m, _ in rank_messages(lexical)] == [(e, 0), (e, 1)]
    timely = [m for m, _ in rank_messages(lexical, in_period=[(e, 1)])]
    assert timely == [(e, 1), (e, 0)]


def test_a_hit_whose_session_holds_another_strong_hit_outranks_an_equal_one_alone() -> None:
    session = {"a": "s1", "b": "s2", "c": "s2", "d": "s3"}
    raised = with_neighbours(
        [("a", 0.95), ("b", 0.8), ("c", 0.6), ("d", 0.0)], session.__getitem__, weight=0.5
    )
    assert [item for item, _ in raised] == ["b", "c", "a", "d"]
    assert [score for _, score in raised] == pytest.approx([0.8 + 0.3, 0.6 + 0.4, 0.95, 0.0])
    alone = with_neighbours([("x", 2.0), ("y", 1.0)], {"x": 1, "y": 2}.__getitem__, weight=1.0)
    assert alone == [("x", 2.0), ("y", 1.0)], "a hit alone in its session is not raised by itself"
    tied = with_neighbours([("p", 1.0), ("q", 1.0)], lambda _: "s", weight=0.5)
    assert tied == [("p", 1.5), ("q", 1.5)], "equal hits of one session raise each other alike"


def test_the_session_prior_reorders_messages_before_the_quoted_list_is_fused() -> None:
    e = uuid.UUID(int=1)
    lexical = [((e, 0), 3.0), ((e, 1), 2.9), ((e, 2), 2.0)]
    by_words = [m for m, _ in rank_messages(lexical)]
    assert by_words == [(e, 0), (e, 1), (e, 2)]
    sessions = {(e, 0): "lone", (e, 1): "talk", (e, 2): "talk"}
    with_sessions = [m for m, _ in rank_messages(lexical, session_of=sessions)]
    assert with_sessions == [(e, 1), (e, 0), (e, 2)]
