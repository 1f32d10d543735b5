"""Which words of a question may be misspelt, and what they may have meant — never a word the
principal could mean.

A question's term no message in scope holds is a candidate for correction
(:func:`engram.projections.messages.lexical.question_statistics`), but most such terms are real words the
principal simply never wrote: "coat" (of paint) is not "cost", Portuguese "para" is not "park".
So a word is corrected only when it is **not a word**: not in the principal's messages (the
statistics say) and not in the word list of the question's language. The lists are
pyspellchecker's (MIT; word frequencies built from OpenSubtitles and Wiktionary, shipped gzipped
inside the wheel: nothing is fetched at run time): English, Spanish and Portuguese, the
languages recall is measured in (docs/retrieval.md).

- **The question's language** (:func:`language_of`): the language whose most common words
  (:data:`COMMON`) hold the most of the question's words; a tie is English's.
- **Not a word** (:func:`read_spelling`): a word of letters only, at least
  :data:`MIN_CORRECTED` long, absent from that language's whole list (160k English words, 86k
  Spanish, 417k Portuguese).
- **What it may have meant**: the list's words one edit away (a letter left out, added,
  replaced, or two swapped: "meditaion" → "meditation"), which recall looks up in the principal's
  messages beside its own nearest lexemes; a correction is added to the question's terms, the
  word as asked stays.

Loading a list costs a fraction of a second of CPU, once per process and language
(:func:`read_spelling` is meant to run off the event loop the first time); the whole list is
kept only for a language a question was asked in.
"""

from __future__ import annotations

import functools
import gzip
import importlib.resources
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

import orjson

LANGUAGES = ("en", "es", "pt")
"""The word lists read, by ISO 639-1 code; the first wins a tie."""
COMMON = 5_000
"""How many of a language's commonest words decide whether a question is in it."""
MIN_CORRECTED = 4
"""The shortest word corrected: a short word shares too few letters to be told from another."""
MAX_CANDIDATES = 8
"""The most spellings one word may have meant (the list's commonest first)."""

_WORD = re.compile("[^\\W\\d_]+(?:['\u2019][^\\W\\d_]+)?")


def words_of(text: str) -> list[str]:
    """The words of ``text``, case-folded, in order (letters only: numbers and punctuation are
    not words here)."""
    return [w.casefold() for w in _WORD.findall(text)]


@functools.cache
def _counts(language: str) -> Mapping[str, int]:
    resource = importlib.resources.files("spellchecker").joinpath(
        "resources", f"{language}.json.gz"
    )
    with resource.open("rb") as packed:
        counts: dict[str, int] = orjson.loads(gzip.decompress(packed.read()))
    return counts


@functools.cache
def common(language: str) -> frozenset[str]:
    """The :data:`COMMON` most frequent words of ``language``."""
    ranked = sorted(_counts(language).items(), key=lambda pair: (-pair[1], pair[0]))
    return frozenset(word for word, _ in ranked[:COMMON])


@functools.cache
def _alphabet(language: str) -> str:
    return "".join(sorted({c for word in common(language) for c in word if c.isalpha()}))


def language_of(words: Iterable[str]) -> str:
    """The language of :data:`LANGUAGES` whose commonest words hold the most of ``words``
    (case-folded); English when none holds more."""
    asked = list(words)
    held = {language: sum(w in common(language) for w in asked) for language in LANGUAGES}
    return max(LANGUAGES, key=lambda language: (held[language], -LANGUAGES.index(language)))


def is_word(word: str, language: str) -> bool:
    """Whether ``word`` (case-folded) is in ``language``'s whole word list."""
    return word in _counts(language)


def one_edit(word: str, language: str) -> list[str]:
    """The words of ``language``'s list one edit from ``word`` (deletion, insertion,
    substitution, or a swap of neighbours), commonest first, at most :data:`MAX_CANDIDATES`."""
    letters = _alphabet(language)
    splits = [(word[:i], word[i:]) for i in range(len(word) + 1)]
    edits = {a + b[1:] for a, b in splits if b}
    edits |= {a + b[1] + b[0] + b[2:] for a, b in splits if len(b) > 1}
    edits |= {a + c + b[1:] for a, b in splits if b for c in letters}
    edits |= {a + c + b for a, b in splits for c in letters}
    counts = _counts(language)
    found = sorted((w for w in edits if w in counts and w != word), key=lambda w: (-counts[w], w))
    return found[:MAX_CANDIDATES]


@dataclass(frozen=True, slots=True)
class Spelling:
    """How a question was read: its language, and each word of it that is not a word of that
    language with the words it may have meant (possibly none)."""

    language: str
    misspelt: Mapping[str, tuple[str, ...]]


def correctable(word: str) -> bool:
    """Long enough to correct, and letters only."""
    return len(word) >= MIN_CORRECTED and word.isalpha()


def read_spelling(text: str) -> Spelling:
    """``text``'s language and its words that are not words of it (:func:`is_word`), each with
    :func:`one_edit`'s candidates. Whether the principal's messages hold a word is not known
    here: recall corrects only the words its statistics find in no message."""
    asked = words_of(text)
    language = language_of(asked)
    misspelt = {
        word: tuple(one_edit(word, language))
        for word in dict.fromkeys(asked)
        if correctable(word) and not is_word(word, language)
    }
    return Spelling(language, misspelt)
