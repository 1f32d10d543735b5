"""Quoted and reported speech inside a user's message is not the user's assertion."""

from __future__ import annotations

from pathlib import Path

import pytest

from engram.formation.deterministic import speech
from engram.formation.deterministic.speech import speech_regions
from tests.unit.formation.formed import formed


def test_a_quoted_email_inside_a_user_message_forms_nothing() -> None:
    content = (
        "The email said: 'I am your account manager, I work at Ridgeway Bank. "
        "I live in Basel.' Weird, right?"
    )
    assert formed(content) == set()


@pytest.mark.parametrize(
    "content",
    [
        'My brother texted "I just bought a jet ski" this morning.',
        "She said \u201cI work at Helix Corp and I love sushi\u201d at dinner.",
        "Here is the message: I have a package for you. I live in Riga.",
        "The note read: I own this bike.",
    ],
)
def test_someone_elses_words_in_quotes_or_after_a_reporting_colon_form_nothing(
    content: str,
) -> None:
    assert formed(content) == set()


def test_the_users_own_words_beside_a_quotation_still_form() -> None:
    content = 'He wrote "I live in Oslo" on the card. I live in Bergen.'
    assert formed(content) == {("speaker", "lives_in", "Bergen")}


def test_a_reporting_colon_reaches_only_to_the_end_of_its_paragraph() -> None:
    content = "The ad said:\nI have a boat for sale.\n\nI live in Tartu."
    assert formed(content) == {("speaker", "lives_in", "Tartu")}


def test_a_short_quoted_title_is_not_speech() -> None:
    assert speech_regions('I joined a club called "Night Owls".') == []
    assert formed('I joined a club called "Night Owls".') == {("speaker", "member_of", "club")}


def test_an_unclosed_elided_word_opens_no_quotation_but_a_closed_quote_is_still_speech() -> None:
    assert not speech_regions("I'm selling scarves 'cause I love knitting.")
    assert speech_regions("Her card read 'til next time, I live in Lyon now' and I smiled.")


def test_every_quotation_match_holds_one_of_the_marks_that_let_a_message_be_searched() -> None:
    """The marks are what lets ``speech_regions`` skip a message: each pattern's matches,
    anywhere in the labeled corpus and in quoting shapes, contain one of them."""
    corpus = Path(__file__).resolve().parents[2] / "corpus"
    texts = [p.read_text(encoding="utf-8") for p in sorted(corpus.rglob("*.yaml"))]
    texts += ["she said: 'I live in Lyon' and \u201cI work at Acme\u201d", "\u2018I am here\u2019"]
    seen = 0
    for pattern, marks in speech._QUOTATIONS:
        for text in texts:
            for match in pattern.finditer(text):
                seen += 1
                assert any(mark in match.group() for mark in marks), match.group()
    for text in texts:
        for match in speech._REPORTING_COLON.finditer(text):
            seen += 1
            assert ":" in match.group()
    assert seen > 10
