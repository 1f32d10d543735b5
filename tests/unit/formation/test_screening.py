"""A screened pattern answers exactly what its original answers, on any text: the needles and
the case-sensitive twin only ever skip a search that could not match."""

from __future__ import annotations

import dataclasses
import importlib
import pkgutil
import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import engram.formation as formation
from engram.formation.deterministic import belongings
from engram.formation.deterministic.clauses import split_clauses
from engram.formation.screening import Screened, lowered, screen

CORPUS = Path(__file__).resolve().parents[2] / "corpus"


def _screened_in(value: object) -> Iterator[Screened]:
    if isinstance(value, Screened):
        yield value
    elif isinstance(value, tuple | list):
        for item in value:
            yield from _screened_in(item)
    elif isinstance(value, dict):
        for item in value.values():
            yield from _screened_in(item)
    elif dataclasses.is_dataclass(value) and not isinstance(value, type):
        for item in dataclasses.fields(value):
            yield from _screened_in(getattr(value, item.name))


def _every_screened() -> list[Screened]:
    found: dict[int, Screened] = {}
    for info in pkgutil.walk_packages(formation.__path__, "engram.formation."):
        module = importlib.import_module(info.name)
        for value in vars(module).values():
            found.update((id(f), f) for f in _screened_in(value))
    return list(found.values())


SCREENED = _every_screened()


def _corpus_texts() -> list[str]:
    texts: list[str] = []
    for path in sorted(CORPUS.rglob("*.yaml")):
        for line in path.read_text(encoding="utf-8").splitlines():
            content = line.strip().removeprefix("- ").removeprefix("content:").strip()
            if content:
                texts.append(content.strip("'\""))
    clauses = [c.text for t in texts for c in split_clauses(t)]
    return texts + clauses + [t.upper() for t in texts] + [t.swapcase() for t in clauses]


TEXTS = _corpus_texts()
WORDS = sorted({w for t in TEXTS for w in re.findall(r"[\w']+|[^\w\s]", t)})


def _same(pattern: re.Pattern[str], screened: Screened, text: str) -> None:
    for how in ("search", "match", "fullmatch"):
        expected, got = getattr(pattern, how)(text), getattr(screened, how)(text)
        assert (got and (got.span(), got.groups())) == (
            expected and (expected.span(), expected.groups())
        ), (how, pattern.pattern, text)
    expected, got = pattern.search(text), screened.search_lowered(text, lowered(text))
    assert (got and got.span()) == (expected and expected.span())
    assert [m.span() for m in screened.finditer(text)] == [m.span() for m in pattern.finditer(text)]
    assert screened.sub("<>", text) == pattern.sub("<>", text)


def test_every_screened_pattern_of_the_readers_and_gates_has_a_cheap_check() -> None:
    """Only a case-sensitive pattern that no literal string is sure to be in (the 40-character
    AWS secret) has none; a case-insensitive one that lost its twin would be slow again."""
    assert len(SCREENED) >= 40
    slow = [s.pattern for s in SCREENED if not s.fast]
    assert all(not p.flags & re.IGNORECASE for p in slow), slow
    assert len(slow) <= 1, slow


@pytest.mark.parametrize("screened", SCREENED, ids=lambda f: f.pattern.pattern[:40])
def test_every_screened_pattern_answers_as_its_original_on_the_corpus(screened: Screened) -> None:
    for text in TEXTS:
        _same(screened.pattern, screened, text)


@settings(max_examples=300, deadline=None)
@given(
    st.lists(
        st.sampled_from(WORDS)
        | st.sampled_from(["I", "SAID", "\u017faid", "\u212a", "\u0131", "\u0130", "\u00e9"])
        | st.text(max_size=3),
        max_size=14,
    ),
    st.sampled_from([" ", "", ", ", "\n", "  "]),
)
def test_every_screened_pattern_answers_as_its_original_on_any_words(
    words: list[str], separator: str
) -> None:
    text = separator.join(words)
    for screened in SCREENED:
        _same(screened.pattern, screened, text)


def test_upper_case_literals_and_classes_still_match_either_case() -> None:
    wish = screen(re.compile(r"\bI wish\b|(?<![A-Z])X[A-Z]+", re.IGNORECASE))
    assert wish.fast
    for text in ("i WISH", "I wish", "abxyz", "AB xYZ"):
        _same(wish.pattern, wish, text)
    assert wish.search("i WISH") is not None
    assert wish.search("xyz") is not None


def test_text_beyond_ascii_goes_to_the_original_pattern() -> None:
    said = screen(re.compile(r"\bsaid\b", re.IGNORECASE))
    assert said.fast
    assert said.search("she \u017faid so") is not None  # the long s folds to s


@pytest.mark.parametrize(
    "source",
    [
        r"(?-i:Said) it",  # a section that matches case-sensitively
        "caf\u00e9",  # a letter beyond ASCII
        "[\u0100-\u017f]",  # a class with letters beyond ASCII (the long s among them)
    ],
)
def test_patterns_the_twin_might_not_answer_for_are_left_alone(source: str) -> None:
    screened = screen(re.compile(source, re.IGNORECASE))
    assert not screened.fast
    for text in ("said it", "Said it", "CAF\u00c9", "caf\u00e9", "\u017f"):
        _same(screened.pattern, screened, text)


@pytest.mark.parametrize(
    ("source", "flags", "needles"),
    [
        (r"\bI(?:'m| am)\s+(?:passionate|enthusiastic)\s+about", 0, ("enthusiastic", "passionate")),
        (r"\bSaid\b|\bTold me\b", re.IGNORECASE, ("said", "told me")),
        (r"\bmay\b", 0, ("may",)),
        (r"(?:^|\bI\s+)(?:had|threw)\s+a", 0, ("had", "threw")),
        (r"[Mm]y\s+(?:new\s+)?dog", 0, ("dog",)),
        (r"(?:new\s+)+home", 0, ("home",)),
        (r"(?:a|)b?", 0, None),  # an empty alternative guarantees nothing
        (r"\w+", 0, None),
    ],
)
def test_needles_are_strings_every_match_goes_through(
    source: str, flags: int, needles: tuple[str, ...] | None
) -> None:
    screened = screen(re.compile(source, flags))
    assert screened.needles == needles
    for text in ("I'm passionate about it", "i WANT TO go", "you may", "Bo had a cat", "my dog"):
        _same(screened.pattern, screened, text)


def test_the_pet_readers_early_exit_names_strings_their_patterns_guarantee() -> None:
    """``belongings._my_pet`` returns early without "my"/"My": each pet pattern's needles
    (strings every match contains) must be among those."""
    for pattern in (belongings._MY_PET, belongings._NAME_MY_PET):
        assert pattern.needles is not None
        assert set(pattern.needles) <= {"my", "My"}, pattern.needles
