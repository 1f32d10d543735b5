"""A Portuguese or Spanish question's words in English: the glossaries shipped beside
``engram.projections.messages.glossary`` (built by ``dev/glossary.py``), read with sentences of
our own."""

from __future__ import annotations

import pytest

from engram.projections.messages.glossary import GLOSSED, glossary, glosses, translations, written
from engram.projections.messages.spelling import language_of, words_of


@pytest.mark.parametrize(
    ("word", "language", "english"),
    [
        ("irmão", "pt", "brother"),
        ("hermano", "es", "brother"),
        ("biblioteca", "pt", "library"),
        ("biblioteca", "es", "library"),
        ("cachorro", "pt", "dog"),
        ("restaurante", "es", "restaurant"),
        ("aniversário", "pt", "birthday"),
        ("oficina", "es", "office"),
        ("cozinha", "pt", "kitchen"),
        ("cocina", "es", "kitchen"),
    ],
)
def test_a_word_has_its_english_word(word: str, language: str, english: str) -> None:
    assert english in translations(word, language)


def test_a_questions_content_words_are_glossed() -> None:
    question = "Quando levei o meu cachorro à biblioteca?"
    language = language_of(words_of(question))
    assert language == "pt"
    added = glosses(words_of(question), language)
    assert {"dog", "library"} <= set(added)
    assert not {"quando", "cachorro", "biblioteca"} & set(added), "only English words are added"


def test_a_spanish_question_too() -> None:
    question = "¿Cuándo llevé a mi hermano al restaurante?"
    language = language_of(words_of(question))
    assert language == "es"
    assert {"brother", "restaurant"} <= set(glosses(words_of(question), language))


def test_a_look_alike_is_not_a_translation() -> None:
    # the model aligns rarer words by their spelling: "odeia" (hates) is nearest "eddie", and
    # "assistiu" (watched) "assisting", each with too low a score to be used
    assert translations("odeia", "pt") == []
    assert "assisting" not in translations("assistiu", "pt")


def test_an_english_question_and_an_unknown_word_add_nothing() -> None:
    assert glosses(words_of("When did I take my dog to the library?"), "en") == []
    assert translations("zqxwvk", "pt") == []


def test_each_english_word_is_added_once_in_order() -> None:
    added = glosses(["cachorro", "cachorro", "biblioteca"], "pt")
    assert len(added) == len(set(added))
    assert added.index("dog") < added.index("library")


def test_the_glossaries_are_the_ones_named() -> None:
    assert set(GLOSSED) == {"pt", "es"}
    assert all(len(glossary(language)) > 10_000 for language in GLOSSED)
    with pytest.raises(KeyError, match="no glossary"):
        glossary("fr")


def test_the_written_glossary_covers_common_words_the_model_leaves_out() -> None:
    assert translations("festa", "pt") == ["party"]
    assert translations("perro", "es") == ["dog"]
    assert "test" in translations("prova", "pt")
    question = "¿Cuándo llevé al perro a la playa?"
    assert {"dog", "beach"} <= set(glosses(words_of(question), language_of(words_of(question))))


def test_the_written_glossary_holds_only_words_and_their_english() -> None:
    for language in GLOSSED:
        entries = written(language)
        assert len(entries) > 100
        for word, english in entries.items():
            assert word == word.casefold() and word.isalpha(), word
            assert english and all(e.isascii() and e.isalpha() for e in english), word
