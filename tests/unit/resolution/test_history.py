"""A state told in the past is kept as history: a belief with an end that replaces nothing.

"I used to live in Oslo" says where the principal lived, not where they live: it forms a belief
whose valid time is closed when it was told, it supersedes no current value and no later value
supersedes it, and it reads "used to". A plan told in the future is held now.
"""

from __future__ import annotations

from engram.formation.wording import Person, kept_as_history, readable_statement
from engram.resolution.beliefs import BeliefState
from engram.resolution.chunk import resolve_chunk
from engram.schemas.claims import ClaimsBatchFormed, Tense
from tests.support.episodes import turn
from tests.support.projecting import batch_of, claim


def _said(text: str, seq: int, relation: str, obj: str, quote: str, **kw: str) -> ClaimsBatchFormed:
    episode = turn("t", "ana", "p", text, seq=seq)
    return batch_of(episode, claim("I", relation, obj, quote, **kw), offset=seq)


def _current(batches: list[ClaimsBatchFormed]) -> dict[str, tuple[str, bool]]:
    changes, _ = resolve_chunk(BeliefState(), batches)
    rows = {**changes.beliefs_new, **changes.beliefs_changed}
    return {
        b.object_text: (b.status, b.valid_to is not None)
        for b in rows.values()
        if b.relation == "lives_in"
    }


def test_a_past_state_forms_a_belief_with_an_end() -> None:
    batch = _said(
        "I used to live in Oslo.", 0, "lives_in", "Oslo", "I used to live in Oslo", tense="past"
    )
    [candidate] = batch.candidates
    assert (candidate.tense, candidate.cardinality) == (Tense.PAST, "many")
    changes, _ = resolve_chunk(BeliefState(), [batch])
    [belief] = changes.beliefs_new.values()
    assert belief.status == "active" and not belief.is_single
    assert belief.valid_to == belief.valid_from == batch.occurred_at


def test_a_past_value_and_the_current_value_both_stand() -> None:
    """Told in either order, the history does not replace the current home, nor it the history."""
    now = _said("I live in Bergen.", 0, "lives_in", "Bergen", "I live in Bergen")
    before = _said(
        "I used to live in Oslo.", 1, "lives_in", "Oslo", "I used to live in Oslo", tense="past"
    )
    expected = {"Bergen": ("active", False), "Oslo": ("active", True)}
    assert _current([now, before]) == expected
    later_now = _said("I live in Bergen.", 2, "lives_in", "Bergen", "I live in Bergen")
    assert _current([before, later_now]) == expected


def test_the_same_value_now_is_not_a_repetition_of_its_history() -> None:
    before = _said(
        "I used to live in Oslo.", 0, "lives_in", "Oslo", "I used to live in Oslo", tense="past"
    )
    back = _said("I live in Oslo again.", 1, "lives_in", "Oslo", "I live in Oslo")
    changes, _ = resolve_chunk(BeliefState(), [before, back])
    ends = sorted(b.valid_to is not None for b in changes.beliefs_new.values())
    assert ends == [False, True]


def test_a_future_intention_forms_a_current_belief() -> None:
    batch = _said(
        "I'm going to learn the cello.",
        0,
        "intends_to",
        "learn the cello",
        "I'm going to learn the cello",
        tense="future",
    )
    [candidate] = batch.candidates
    assert candidate.tense is Tense.PRESENT
    assert batch.refusals == []


def test_history_reads_used_to() -> None:
    def say(relation: str, obj: str, ended: bool, person: Person = Person("ana")) -> str:
        return readable_statement(
            subject="speaker",
            subject_is_principal=True,
            relation=relation,
            obj=obj,
            facet=None,
            retracted=False,
            person=person,
            ended=ended,
        )

    assert say("lives_in", "Oslo", ended=True) == "ana used to live in Oslo"
    assert say("lives_in", "Oslo", ended=True, person=Person()) == "You used to live in Oslo"
    assert say("has_role", "librarian", ended=True) == "ana's role used to be librarian"
    assert say("learning", "Welsh", ended=True) == "ana used to be learning Welsh"
    assert say("lives_in", "Oslo", ended=False) == "ana lives in Oslo"
    assert kept_as_history("active", object()) and not kept_as_history("superseded", object())
    assert not kept_as_history("active", None)
