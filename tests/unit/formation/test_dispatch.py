"""Dispatch per clause skips only readers that would have found nothing: the needle index never
rules out a pattern that matches, every reader names its trigger, and each trigger holds."""

from __future__ import annotations

import inspect
import re
from collections.abc import Callable
from datetime import date

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engram.formation import gates, injection, secrets, sensitivity
from engram.formation.deterministic import events, reading, relationships
from engram.formation.deterministic.dispatch import Reader, Readers
from engram.formation.screening import NeedleIndex, Screened, screen
from tests.unit.formation.test_screening import SCREENED, TEXTS, WORDS

READERS = (events._TOLD_ANYWHERE, events._OPENING)
DAY = date(2023, 5, 8)
SOUP = st.lists(
    st.sampled_from(WORDS)
    | st.sampled_from(["I", "My", "\u017faid", "\u212a", "\u0131", "\u00e9"])
    | st.text(max_size=3),
    max_size=14,
).map(" ".join)


def _pairs() -> list[tuple[Reader, tuple[Screened, ...]]]:
    return [
        (reader, tuple(t if isinstance(t, Screened) else screen(t) for t in triggers))
        for group in READERS
        for reader, triggers in group.triggers.items()
    ]


PAIRS = _pairs()
INDEX = NeedleIndex([(s,) for s in SCREENED])


def _never_rules_out_a_match(text: str) -> None:
    possible = INDEX.possible(text)
    for position, screened in enumerate(SCREENED):
        if screened.pattern.search(text) is not None:
            assert possible >> position & 1, (screened.pattern.pattern, text)


def test_the_needle_index_never_rules_out_a_pattern_that_matches_on_the_corpus() -> None:
    for text in TEXTS:
        _never_rules_out_a_match(text)


@settings(max_examples=300, deadline=None)
@given(SOUP)
def test_the_needle_index_never_rules_out_a_pattern_that_matches_on_any_words(text: str) -> None:
    _never_rules_out_a_match(text)


def test_the_needle_index_rules_out_what_cannot_match_and_keeps_the_rest() -> None:
    index = NeedleIndex(
        [
            (screen(re.compile(r"\bmy\s+dog\b")),),
            (screen(re.compile(r"\bsaid\b", re.IGNORECASE)),),
            (screen(re.compile(r"\w+")),),  # no needle: always possible
            (),
        ]
    )
    assert index.possible("My DOG barked") == 0b1101  # "dog" is its needle, whatever the case
    assert index.possible("she SAID so") == 0b1110
    assert index.possible("she \u017faid so") == 0b1111  # beyond ASCII: everything is possible


def test_every_reader_the_events_dispatch_calls_names_its_trigger() -> None:
    """A reader without a trigger would be called on every clause: correct, but slow, and
    most likely a reader added without thinking of dispatch."""
    for group in READERS:
        untriggered = [r.__qualname__ for r, t in group.triggers.items() if not t]
        assert not untriggered, untriggered
        assert all(s.needles for _, triggers in PAIRS for s in triggers)


GATED = [
    (reader, tuple(t if isinstance(t, Screened) else screen(t) for t in triggers))
    for reader, triggers in reading._CLAUSE_WIDE.triggers.items()
]
"""The clause-wide readers :func:`.reading.read_clause` skips by :class:`.dispatch.Gates`."""


def _call(reader: Callable[..., object], text: str) -> object:
    """A clause-wide reader takes the clause, and the episode's date when it grounds dates."""
    if len(inspect.signature(reader).parameters) == 2:
        return reader(text, DAY)
    return reader(text)


def _gate_holds(reader: Callable[..., object], triggers: tuple[Screened, ...], text: str) -> None:
    if all(t.pattern.search(text) is None for t in triggers):
        assert not _call(reader, text), (reader.__qualname__, text)


@pytest.mark.parametrize("pair", GATED, ids=lambda p: p[0].__qualname__)
def test_a_gated_clause_wide_reader_finds_nothing_where_its_trigger_finds_nothing(
    pair: tuple[Callable[..., object], tuple[Screened, ...]],
) -> None:
    reader, triggers = pair
    assert triggers and all(t.needles for t in triggers), reader.__qualname__
    for text in TEXTS:
        _gate_holds(reader, triggers, text)


@settings(max_examples=200, deadline=None)
@given(SOUP)
def test_a_gated_clause_wide_reader_finds_nothing_where_its_trigger_finds_nothing_on_any_words(
    text: str,
) -> None:
    for reader, triggers in GATED:
        _gate_holds(reader, triggers, text)


def test_the_gates_answer_what_each_trigger_allows() -> None:
    gates = reading._CLAUSE_WIDE
    for text in TEXTS:
        possible = gates.possible(text)
        for reader, triggers in GATED:
            if any(t.pattern.search(text) for t in triggers):
                assert possible & gates.bit(reader), (reader.__qualname__, text)


def _trigger_holds(reader: Reader, triggers: tuple[Screened, ...], text: str) -> None:
    if all(t.pattern.search(text) is None for t in triggers):
        assert reader(text, DAY) == [], (reader.__qualname__, text)


@pytest.mark.parametrize("pair", PAIRS, ids=lambda p: p[0].__qualname__)
def test_a_reader_finds_nothing_where_its_trigger_finds_nothing(
    pair: tuple[Reader, tuple[Screened, ...]],
) -> None:
    reader, triggers = pair
    for text in TEXTS:
        _trigger_holds(reader, triggers, text)


@settings(max_examples=200, deadline=None)
@given(SOUP)
def test_a_reader_finds_nothing_where_its_trigger_finds_nothing_on_any_words(text: str) -> None:
    for reader, triggers in PAIRS:
        _trigger_holds(reader, triggers, text)


@pytest.mark.parametrize("group", READERS, ids=("told_anywhere", "opening"))
def test_dispatch_finds_what_calling_every_reader_finds(group: Readers) -> None:
    for text in TEXTS:
        every = [f for reader in group.readers for f in reader(text, DAY)]
        assert group.read(text, DAY, events._INDEX.possible(text)) == every, text


MARKER_SETS = (
    (gates._TRANSIENT, injection.TRANSIENT),
    (gates._SYSTEM_RESTATEMENT, injection.SYSTEM_RESTATEMENT),
    (gates._AGENT_RESTATEMENT, injection.AGENT_RESTATEMENT),
    (gates._INSTRUCTION_SHAPED, injection.INSTRUCTION_SHAPED),
)


def _same_first_marker(text: str) -> None:
    for markers, original in MARKER_SETS:
        assert markers.first((text,)) == injection.first_marker(original, (text,)), text


def test_the_gates_name_the_first_marker_the_plain_search_names_on_the_corpus() -> None:
    for text in TEXTS:
        _same_first_marker(text)
    assert gates._TRANSIENT.first(("remind me in 5 minutes",)) == "countdown"


@settings(max_examples=300, deadline=None)
@given(SOUP)
def test_the_gates_name_the_first_marker_the_plain_search_names_on_any_words(text: str) -> None:
    _same_first_marker(text)


@pytest.mark.parametrize(
    ("index", "items"),
    [
        (relationships._ATTRIBUTE_INDEX, [p for p, _ in relationships._ATTRIBUTES]),
        (secrets._RULE_INDEX, [r.pattern for r in secrets._RULES]),
        (sensitivity._INDEX, [p for _, p in sensitivity._ITEMS]),
    ],
    ids=("attributes", "secrets", "sensitivity"),
)
def test_an_index_chooses_every_pattern_that_matches(
    index: NeedleIndex, items: list[Screened]
) -> None:
    for text in TEXTS:
        chosen = index.chosen(text, items)
        assert [p for p in items if p.pattern.search(text)] == [
            p for p in chosen if p.pattern.search(text)
        ], text


def _markup_screen_holds(text: str) -> None:
    if gates._MARKUP.first((text,)) is not None:
        assert gates._MAY_BE_MARKUP.search(text), text


def test_the_markup_screen_never_rules_out_markup_on_the_corpus() -> None:
    for text in TEXTS:
        _markup_screen_holds(text)
    for markup in (
        "<b>",
        "{{x}}",
        "${x}",
        "javascript:",
        "onload=",
        "'; drop table t",
        "union select",
    ):
        assert gates._MARKUP.first((markup,)) is not None
        _markup_screen_holds(markup)


@settings(max_examples=300, deadline=None)
@given(SOUP)
def test_the_markup_screen_never_rules_out_markup_on_any_words(text: str) -> None:
    _markup_screen_holds(text)
