"""Sentences split where they split when the abbreviation check looked at the whole message:
the check reaches back only as far as an abbreviation can start."""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from engram.formation.deterministic import clauses
from tests.unit.formation.test_screening import TEXTS, WORDS


def _whole_message_sentences(content: str) -> list[tuple[int, int, bool]]:
    """``clauses._sentences`` as it was: the abbreviation searched from the message's start."""
    pieces: list[tuple[int, int, bool]] = []
    start = 0
    for match in clauses._SENTENCE_END.finditer(content):
        if match.group() == "." and clauses._ABBREVIATION.search(content, 0, match.start()):
            continue
        pieces.append((start, match.start(), "?" in match.group()))
        start = match.end()
    if start < len(content):
        pieces.append((start, len(content), False))
    return pieces


def test_the_reach_is_the_longest_abbreviation_and_a_newline() -> None:
    assert len("approx") == clauses._ABBREVIATION_WIDTH
    assert len("approx") + 1 == clauses._ABBREVIATION_REACH


def test_sentences_split_as_before_on_the_corpus() -> None:
    for text in TEXTS:
        assert clauses._sentences(text) == _whole_message_sentences(text), text


@settings(max_examples=400, deadline=None)
@given(
    st.lists(
        st.sampled_from(WORDS)
        | st.sampled_from(["St.", "Dr.", "approx.", "e.g.", "i.e.", "xSt.", "St\n.", ".", "\n"]),
        max_size=16,
    ),
    st.sampled_from([" ", "", "\n", ". "]),
)
def test_sentences_split_as_before_on_any_words(words: list[str], separator: str) -> None:
    text = separator.join(words)
    assert clauses._sentences(text) == _whole_message_sentences(text), text


_PLAIN_SENTENCE_END = re.compile(r"[.!?;]+(?=[\s\"'\u201d\u2019)]|$)|\n+")
_PLAIN_BOUNDARY = re.compile(
    r"(?:\s*[,:]\s*(?:"
    + clauses._CONNECTIVE
    + r"\s+)?|\s+"
    + clauses._CONNECTIVE
    + r"\s+|\s+[-\u2013\u2014]+\s+)"
    + clauses._STARTER
)
"""The two splitting patterns as written before they were spelled so ``re`` can skip to where a
match may start: the spelling must not move a single match."""


def _same_splits(text: str) -> None:
    for plain, spelled in (
        (_PLAIN_SENTENCE_END, clauses._SENTENCE_END),
        (_PLAIN_BOUNDARY, clauses._BOUNDARY),
    ):
        assert [m.span() for m in spelled.finditer(text)] == [
            m.span() for m in plain.finditer(text)
        ], (plain.pattern[:40], text)


def test_the_splitting_patterns_match_where_their_plain_spelling_matches_on_the_corpus() -> None:
    for text in TEXTS:
        _same_splits(text)


@settings(max_examples=300, deadline=None)
@given(
    st.lists(
        st.sampled_from(WORDS) | st.sampled_from([",", " , ", ":", " - ", "\u2014", "and", "I"]),
        max_size=16,
    ),
    st.sampled_from([" ", "", "  ", "\n", " \t"]),
)
def test_the_splitting_patterns_match_where_their_plain_spelling_matches_on_any_words(
    words: list[str], separator: str
) -> None:
    _same_splits(separator.join(words))
