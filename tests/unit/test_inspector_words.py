"""The inspector's words: every refusal reason said, quotes found inside their messages by their
byte span, confidence and freshness as a person reads them."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from engram.projections.reads.freshness import PrincipalProgress
from engram.schemas.claims import RefusalReason
from engram.schemas.corrections import CorrectionKind
from engram.web.ui.words import (
    CORRECTION_CHOICES,
    DELETE,
    REASON_WORDS,
    confidence_words,
    freshness_words,
    quote_in_message,
    reason_words,
)


def test_every_refusal_reason_is_said_in_words() -> None:
    assert set(REASON_WORDS) == set(RefusalReason)
    assert all("_" not in reason_words(r.value) for r in RefusalReason)


def test_a_reason_outside_the_set_is_read_with_spaces() -> None:
    assert reason_words("some_new_reason") == "some new reason"


def test_the_four_answers_are_the_three_corrections_and_delete() -> None:
    kinds = {CorrectionKind.UNTRUE, CorrectionKind.CHANGED, CorrectionKind.NOT_HERE}
    assert set(CORRECTION_CHOICES) == {k.value for k in kinds} | {DELETE}


@pytest.mark.parametrize(
    ("confidence", "words"),
    [
        (0.95, "very sure"),
        (0.7, "fairly sure"),
        (0.5, "thinks so"),
        (0.3, "not sure"),
        (0.1, "doubtful"),
    ],
)
def test_confidence_in_words(confidence: float, words: str) -> None:
    assert confidence_words(confidence) == words


class TestAQuoteInsideItsMessage:
    def test_the_byte_span_splits_the_message_even_after_multibyte_text(self) -> None:
        content = "Olá! I live in Lisbon, near the river."
        start = content.encode().index(b"I live")
        end = start + len(b"I live in Lisbon")
        split = quote_in_message(content, "I live in Lisbon", start, end)
        assert (split.before, split.quote, split.after) == (
            "Olá! ",
            "I live in Lisbon",
            ", near the river.",
        )
        assert split.found

    def test_a_span_that_no_longer_holds_the_quote_falls_back_to_finding_it(self) -> None:
        split = quote_in_message("Well, I live in Lisbon.", "I live in Lisbon", 0, 5)
        assert (split.before, split.quote, split.after) == ("Well, ", "I live in Lisbon", ".")

    def test_a_quote_not_in_the_message_is_not_highlighted(self) -> None:
        split = quote_in_message("Something else.", "I live in Lisbon", 0, 16)
        assert not split.found and split.before == "Something else." and split.quote == ""


class TestFreshness:
    def test_up_to_date_names_the_time(self) -> None:
        moment = datetime(2026, 12, 4, 10, 42, tzinfo=UTC)
        assert freshness_words(PrincipalProgress(moment, 0, None, 0)) == (
            "Up to date with everything you said until 4 Dec 2026 10:42 UTC."
        )

    def test_pending_and_parked_are_said(self) -> None:
        moment = datetime(2026, 12, 4, 10, 42, tzinfo=UTC)
        text = freshness_words(PrincipalProgress(moment, 2, moment, 1))
        assert text.startswith("Still reading 2 conversations since 4 Dec 2026 10:42 UTC")
        assert "1 conversation could not be read" in text

    def test_nothing_read_yet(self) -> None:
        assert freshness_words(PrincipalProgress(None, 0, None, 0)) == (
            "Nothing you said has been read yet."
        )
