"""Issue 27, item 1: family events that change a relationship, and what they supersede.

Married, engaged, divorced, a child born, a relative who died: each forms the relationship it
starts, or retracts the one it ends in the very claim that relationship formed as, so the
resolution core supersedes it. Every sentence is written for this file.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from engram.formation.deterministic import propose
from engram.resolution.beliefs import BeliefRow, BeliefState
from engram.resolution.chunk import resolve_chunk
from engram.schemas.claims import ClaimsBatchFormed, SourcePosition
from tests.support.forming import episode, form, message
from tests.unit.formation.formed import EPISODE_DAY, formed


def related(content: str) -> set[tuple[str, str | None, str]]:
    """(object, facet, polarity) of every related_to proposal of ``content``."""
    return {
        (p.object, p.facet, p.polarity or "")
        for p in propose(content, occurred_on=EPISODE_DAY)
        if p.relation == "related_to"
    }


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        ("My father passed away last year.", {("father", "late father (2023)", "assert")}),
        ("Sadly, my grandpa died two months ago.", {("grandfather", "late grandfather (2024-03)", "assert")}),
        ("I lost my mum to a stroke in 2019.", {("mother", "late mother (2019)", "assert")}),
        ("We buried my uncle after the death of my uncle Pavel.", {
            ("Pavel", "uncle", "retract"), ("Pavel", "late uncle", "assert")}),
        ("My sister Greta passed away in the spring.", {
            ("Greta", "sister", "retract"), ("Greta", "late sister", "assert")}),
        ("My husband Ivo died last winter.", {
            ("Ivo", "husband", "retract"), ("Ivo", "late husband (2024)", "assert")}),
    ],
)  # fmt: skip
def test_a_relative_who_died_is_one_belief_with_the_date_and_ends_the_living_one(
    content: str, expected: set[tuple[str, str | None, str]]
) -> None:
    assert related(content) == expected


@pytest.mark.parametrize(
    "content",
    [
        "My brother passed the driving test on Monday.",
        "My cat Juniper passed away last spring.",
        "My grandma nearly died of fright at the haunted house.",
        "I lost my dad's old compass on the hike.",
        "I lost my cousin in the crowd at the parade.",
        "If my mom died I would not cope.",
        "My boss died laughing at the joke.",
    ],
)
def test_what_only_looks_like_a_death_in_the_family_ends_no_relative(content: str) -> None:
    assert not {r for r in related(content) if r[2] == "retract" or "late" in (r[1] or "")}


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        ("We got married in a tiny chapel last June!", {("spouse", "spouse", "assert")}),
        ("Jonah and I got married on the beach.", {("Jonah", "spouse", "assert")}),
        ("I just got engaged!", {("fiancé", "fiancé", "assert")}),
        ("Beatriz and I got engaged over the holidays.", {("Beatriz", "fiancé", "assert")}),
    ],
)
def test_a_wedding_or_an_engagement_starts_a_partner(
    content: str, expected: set[tuple[str, str | None, str]]
) -> None:
    assert related(content) == expected


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        ("I got divorced last autumn.", {("spouse", "spouse", "retract")}),
        ("I divorced Marek in 2021.", {("Marek", "spouse", "retract")}),
        ("Odile and I got divorced after ten years.", {("Odile", "spouse", "retract")}),
        ("My wife and I separated in March.", {("wife", "wife", "retract")}),
        ("I broke up with my boyfriend Kasper.", {("Kasper", "boyfriend", "retract")}),
    ],
)
def test_a_divorce_or_a_break_up_retracts_the_partner_the_words_name(
    content: str, expected: set[tuple[str, str | None, str]]
) -> None:
    assert related(content) == expected


def test_a_break_up_with_a_name_and_no_kin_word_ends_nothing_it_cannot_name() -> None:
    assert related("Pablo and I split up.") == set()
    assert related("I split up with Pablo.") == set()


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        ("Our daughter Noor was born on Sunday!", {("Noor", "daughter", "assert")}),
        ("We had a baby boy last week.", {("son", "son", "assert")}),
        ("I gave birth to twins in April.", {("child", "child", "assert")}),
        ("We welcomed our first baby, Ilse, in May.", {("Ilse", "child", "assert")}),
        ("My nephew was born yesterday.", {("nephew", "nephew", "assert")}),
    ],
)
def test_a_child_born_is_the_speakers_child_by_name_when_given(
    content: str, expected: set[tuple[str, str | None, str]]
) -> None:
    assert related(content) == expected


@pytest.mark.parametrize(
    "content",
    [
        "Do you think we should get married?",
        "I hope we get married someday.",
        "I never got married.",
        "Thanks and I got a new job.",
    ],
)
def test_a_question_a_wish_or_a_denial_starts_no_marriage(content: str) -> None:
    assert not {c for c in formed(content) if c[1] == "related_to"}


_START = datetime(2024, 1, 10, 12, 0, tzinfo=UTC)


def _batches(*contents: str) -> list[ClaimsBatchFormed]:
    """One message a day, each its own episode and log position, formed as the worker would."""
    made = []
    for n, content in enumerate(contents):
        at = _START + timedelta(days=n)
        proposals = propose(content, occurred_on=at.date())
        turn = episode(message(content), event=n + 1, principal="p", occurred_at=at)
        source = SourcePosition(topic="engram.episodes", partition=0, offset=n)
        made.append(form(turn, by_message={0: proposals}, source=source))
    return made


def _beliefs(*contents: str) -> list[BeliefRow]:
    changes, _ = resolve_chunk(BeliefState(), _batches(*contents))
    return list(changes.beliefs_new.values())


def _live(beliefs: list[BeliefRow]) -> set[tuple[str, str, str]]:
    return {(b.object_text, b.facet, b.polarity) for b in beliefs if b.status == "active"}


def test_a_named_parent_who_died_is_superseded_by_the_late_parent() -> None:
    beliefs = _beliefs("My dad Anton is a retired pilot.", "My dad Anton passed away last week.")
    [living] = [b for b in beliefs if b.facet == "father" and b.polarity == "assert"]
    assert living.status == "superseded"
    assert ("Anton", "late father (2024-w01)", "assert") in _live(
        beliefs
    )  # facets are stored lowercased


def test_a_divorce_supersedes_the_spouse_a_wedding_formed() -> None:
    beliefs = _beliefs("Tomasz and I got married in 2015.", "I divorced Tomasz last year.")
    [spouse] = [b for b in beliefs if b.polarity == "assert"]
    assert (spouse.object_text, spouse.facet, spouse.status) == ("Tomasz", "spouse", "superseded")
    assert _live(beliefs) == {("Tomasz", "spouse", "retract")}


def test_splitting_up_supersedes_the_partner_told_with_the_same_kin_word() -> None:
    beliefs = _beliefs("My girlfriend Wren bakes sourdough.", "I broke up with my girlfriend Wren.")
    assert _live(beliefs) == {("Wren", "girlfriend", "retract")}


def test_a_child_born_and_told_again_by_name_is_one_belief() -> None:
    beliefs = _beliefs("Our son Emil was born on Friday!", "My son Emil keeps us up all night.")
    assert _live(beliefs) == {("Emil", "son", "assert")}
    assert len(beliefs) == 1


def test_a_name_told_later_attaches_to_the_unnamed_relative() -> None:
    """ "my husband", and a week later "my husband Sam": one husband, named, is current."""
    beliefs = _beliefs("My husband cooks on Sundays.", "My husband Sam got a new job.")
    assert _live(beliefs) == {("Sam", "husband", "assert")}
    [unnamed] = [b for b in beliefs if b.object_text == "husband"]
    assert unnamed.status == "superseded"


def test_the_unnamed_relative_told_after_the_name_is_the_named_one_again() -> None:
    beliefs = _beliefs("My husband Sam got a new job.", "My husband cooks on Sundays.")
    assert _live(beliefs) == {("Sam", "husband", "assert")}
    [sam] = beliefs
    assert sam.corroboration == 2


def test_an_unnamed_relative_among_two_named_ones_names_neither() -> None:
    beliefs = _beliefs(
        "My son Theo plays chess.", "My son Emil plays football.", "My son is at camp."
    )
    assert _live(beliefs) == {
        ("Theo", "son", "assert"),
        ("Emil", "son", "assert"),
        ("son", "son", "assert"),
    }


def test_resolving_the_same_messages_again_changes_nothing() -> None:
    batches = _batches("My husband Sam got a new job.", "My husband cooks on Sundays.")
    changes, _ = resolve_chunk(BeliefState(), batches)
    again, _ = resolve_chunk(BeliefState(), batches + batches)
    assert [(b.object_text, b.corroboration) for b in again.beliefs_new.values()] == [
        (b.object_text, b.corroboration) for b in changes.beliefs_new.values()
    ]
