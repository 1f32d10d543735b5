"""The pure parts of ``engram eval recall``: the BM25 baseline, ranks, shares and percentiles."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from engram.evaluation.bm25 import BM25, tokens
from engram.evaluation.recall import (
    Question,
    QuestionsError,
    Report,
    Tally,
    first_rank,
    load_questions,
    percentile,
)


def test_bm25_is_the_standard_one_k1_1_2_b_0_75_non_negative_idf() -> None:
    texts = ("the cat sat", "a dog ran far away", "a cat and a dog", "the end", "birds")
    docs = [tokens(t) for t in (*texts, "fish")]
    index = BM25(docs)
    n, avg = 6, sum(map(len, docs)) / 6
    idf_cat = math.log(1 + (n - 2 + 0.5) / (2 + 0.5))
    expected = idf_cat * 1 * 2.2 / (1 + 1.2 * (1 - 0.75 + 0.75 * 2 / avg))
    assert docs[0] == ["cat", "sat"], "stop words are removed"
    assert index.scores(["cat"])[0] == pytest.approx(expected)
    assert index.top(["cat", "dog"], 2) == [2, 0]
    assert index.top(["zebra"], 5) == []


def test_a_word_in_most_documents_still_counts_a_little() -> None:
    index = BM25([["tea"], ["tea"], ["tea", "lisbon"], ["coffee"]])
    assert 0 < index.scores(["tea"])[0] < index.scores(["lisbon"])[2]


def test_the_first_hit_holding_evidence_decides_the_rank() -> None:
    hits = [frozenset({"a"}), frozenset({"b", "c"}), frozenset({"c"})]
    assert first_rank(hits, frozenset({"c"})) == 2
    assert first_rank(hits, frozenset({"z"})) is None


def test_shares_mrr_and_percentiles() -> None:
    tally = Tally()
    for rank in (1, 3, None, 7):
        tally.add(rank, answered=rank is not None)
    tally.latencies_ms.extend([1.0, 2.0, 3.0, 100.0])
    report = tally.to_dict()
    assert report["recall_at_1"] == 0.25
    assert report["recall_at_5"] == 0.5
    assert report["recall_at_10"] == 0.75
    assert report["mrr"] == round((1 + 1 / 3 + 1 / 7) / 4, 4)
    assert report["answered"] == 0.75
    assert (report["latency_ms_p50"], report["latency_ms_p99"]) == (2.0, 100.0)
    assert percentile([], 0.5) == 0.0


def test_own_words_categories_count_together_and_apart() -> None:
    def question(category: int, *, own: bool = True) -> Question:
        return Question("t", "p", "q?", "a", category, frozenset({"e"}), own_evidence=own)

    report = Report()
    ours, theirs = (
        report.tallies(question(2), report.recall),
        report.tallies(question(2), report.bm25),
    )
    assert len(ours) == len(theirs) == 3
    assert sorted(report.recall) == ["2", "all", "own_words_1_2_4"]
    assert len(report.tallies(question(4, own=False), report.recall)) == 2, "only the other's words"
    assert len(report.tallies(question(3), report.recall)) == 2
    assert sorted(report.recall) == ["2", "3", "4", "all", "own_words_1_2_4"]


def test_a_bad_questions_line_is_named(tmp_path: Path) -> None:
    path = tmp_path / "qa.jsonl"
    path.write_text('{"tenant": "t"}\n', encoding="utf-8")
    with pytest.raises(QuestionsError, match=r"qa\.jsonl:1"):
        load_questions(path)


def test_a_question_may_say_when_it_is_asked(tmp_path: Path) -> None:
    path = tmp_path / "qa.jsonl"
    row = (
        '{"tenant": "t", "principal": "p", "question": "What did I cook last week?", '
        '"answer": "soup", "category": 2, "evidence_event_ids": ["e"]'
    )
    path.write_text(row + ', "asked_at": "2023-03-15T10:00:00+00:00"}\n' + row + "}\n")
    dated, undated = load_questions(path)
    assert dated.asked_at is not None and dated.asked_at.isoformat() == "2023-03-15T10:00:00+00:00"
    assert undated.asked_at is None
