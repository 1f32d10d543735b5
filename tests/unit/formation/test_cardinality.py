"""One value at a time, or many: a facet that names a choice against one that is a category."""

from __future__ import annotations

from engram.formation.cardinality import CHOICE_FACETS, choice_facet, single_valued
from engram.formation.vocabulary import Relation, lookup
from engram.policies.prompt import load_extraction_prompt
from engram.resolution.beliefs import BeliefState
from engram.resolution.chunk import resolve_chunk
from tests.support.episodes import turn
from tests.support.projecting import batch_of, claim


def _relation(name: str) -> Relation:
    relation = lookup(name)
    assert relation is not None
    return relation


def test_a_category_facet_holds_many_values_and_a_choice_facet_one() -> None:
    prefers = _relation("prefers")
    assert not single_valued(prefers, "hobby")
    assert not single_valued(prefers, None)
    assert single_valued(prefers, "editor")
    assert single_valued(prefers, "topic:green tea")
    assert single_valued(_relation("lives_in"), None)
    assert not single_valued(_relation("lives_in"), None, past_state=True)
    assert not single_valued(_relation("owns"), "hobby")
    assert {"editor", "interface theme", "indentation style"} <= CHOICE_FACETS
    assert not choice_facet("book")


def test_a_list_under_one_category_forms_every_item_and_keeps_earlier_tastes() -> None:
    text = "Apart from knitting, I also love birdwatching, chess and baking bread."
    listed = turn("t", "ana", "p", text, seq=0)
    items = [
        claim("I", "prefers", what, what, facet="hobby")
        for what in ("knitting", "birdwatching", "chess", "baking bread")
    ]
    first = batch_of(listed, *items, offset=0)
    assert [c.cardinality for c in first.candidates] == ["many"] * 4
    later = turn("t", "ana", "p", "These days I love pottery.", seq=1)
    second = batch_of(
        later, claim("I", "prefers", "pottery", "I love pottery", facet="hobby"), offset=1
    )
    changes, _ = resolve_chunk(BeliefState(), [first, second])
    assert changes.refusals == []
    statuses = sorted((b.object_text, b.status) for b in changes.beliefs_new.values())
    assert statuses == [
        ("baking bread", "active"),
        ("birdwatching", "active"),
        ("chess", "active"),
        ("knitting", "active"),
        ("pottery", "active"),
    ]


def test_a_new_choice_replaces_the_old_one() -> None:
    first = batch_of(
        turn("t", "ana", "p", "I prefer vim.", seq=0),
        claim("I", "prefers", "vim", "I prefer vim", facet="editor"),
        offset=0,
    )
    second = batch_of(
        turn("t", "ana", "p", "I prefer emacs now.", seq=1),
        claim("I", "prefers", "emacs", "I prefer emacs", facet="editor"),
        offset=1,
    )
    changes, _ = resolve_chunk(BeliefState(), [first, second])
    rows = {**changes.beliefs_new, **changes.beliefs_changed}.values()
    assert sorted((b.object_text, b.status) for b in rows) == [
        ("emacs", "active"),
        ("vim", "superseded"),
    ]


def test_the_prompt_names_the_same_choice_facets() -> None:
    """The model is told which facets hold one choice at a time: exactly these."""
    section = " ".join(load_extraction_prompt(None).section("relations").split())
    listed = section.split("a new value replacing the old:")[1].split(".")[0]
    assert {name.strip() for name in listed.split(",")} == CHOICE_FACETS
