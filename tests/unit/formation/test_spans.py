"""Span verification: quotes are found in the message's own bytes, or not at all."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from engram.formation.spans import locate, quote_at


def test_an_exact_quote_is_located_at_its_byte_offsets() -> None:
    span = locate("live in Berlin", "I live in Berlin.")
    assert span is not None
    assert (span.quote, span.start, span.end) == ("live in Berlin", 2, 16)


def test_a_run_of_whitespace_matches_a_single_space_and_the_message_text_is_cited() -> None:
    content = "I live   in\nBerlin"
    span = locate("live in Berlin", content)
    assert span is not None
    assert span.quote == "live   in\nBerlin"
    assert quote_at(content, span.start, span.end) == span.quote


def test_case_is_never_ignored() -> None:
    assert locate("i live in berlin", "I live in Berlin") is None


def test_the_first_occurrence_wins() -> None:
    span = locate("tea", "tea, then more tea")
    assert span is not None
    assert (span.start, span.end) == (0, 3)


def test_offsets_are_bytes_for_non_ascii_text() -> None:
    content = "Zoë lives in Zürich"
    span = locate("Zürich", content)
    assert span is not None
    assert span.start == len("Zoë lives in ".encode())
    assert span.end == span.start + len("Zürich".encode())
    assert quote_at(content, span.start, span.end) == "Zürich"


def test_an_empty_or_absent_quote_is_not_located() -> None:
    assert locate("   ", "anything") is None
    assert locate("Paris", "I live in Berlin") is None


def test_surrounding_whitespace_of_a_quote_is_ignored() -> None:
    span = locate("  Berlin ", "I live in Berlin")
    assert span is not None
    assert span.quote == "Berlin"


@given(content=st.text(max_size=80), start=st.integers(0, 80), length=st.integers(0, 20))
def test_a_known_ascii_flag_locates_the_same_span(content: str, start: int, length: int) -> None:
    """The flag only skips encoding: the span is the one found without it, ASCII or not."""
    quote = content[start : start + length]
    assert locate(quote, content, ascii=content.isascii()) == locate(quote, content)
    if content.isascii():
        assert locate(quote, content, ascii=True) == locate(quote, content)
