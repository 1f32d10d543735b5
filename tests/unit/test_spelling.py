"""Which words of a question may be misspelt: only those that are no word of its language (the
word lists shipped inside pyspellchecker), each with the words one edit away."""

from __future__ import annotations

from engram.projections.messages.spelling import language_of, one_edit, read_spelling, words_of


def test_the_questions_language_is_read_from_its_common_words() -> None:
    assert language_of(words_of("How much did the coat of paint cost?")) == "en"
    assert language_of(words_of("O que eu comprei para o jardim?")) == "pt"
    assert language_of(words_of("¿Qué compré para el jardín de mi casa?")) == "es"
    assert language_of([]) == "en"


def test_real_words_are_never_misspelt() -> None:
    assert read_spelling("How many coats of paint did the shed need?").misspelt == {}
    assert read_spelling("Quando ele montou a tenda para a festa?").misspelt == {}
    assert read_spelling("¿Qué hay para la fiesta en el jardín de mi casa?").misspelt == {}


def test_a_word_that_is_no_word_has_its_words_one_edit_away() -> None:
    reading = read_spelling("When did I start meditaion?")
    assert reading.language == "en"
    assert reading.misspelt["meditaion"][0] == "meditation"
    assert "restaurant" in read_spelling("resturant booking").misspelt["resturant"]
    assert read_spelling("Did I go to the zqxw?").misspelt == {"zqxw": ()}


def test_short_words_and_numbers_are_not_corrected() -> None:
    assert read_spelling("Did I see teh 3rd film in 2049?").misspelt == {}


def test_one_edit_covers_a_swap_a_gap_an_extra_and_a_wrong_letter() -> None:
    for typo in ("meditaiton", "meditaion", "meditationn", "meditatoon"):
        assert "meditation" in one_edit(typo, "en"), typo
