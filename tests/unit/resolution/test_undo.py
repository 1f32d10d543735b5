"""Undo records: what a batch created and the images before it of what it changed, exactly as
the store keeps them (their round trip through JSON loses nothing)."""

from __future__ import annotations

from dataclasses import fields

from engram.resolution.beliefs import MUTABLE_BELIEF_COLUMNS, BeliefState
from engram.resolution.chunk import resolve_chunk
from engram.resolution.undo import BatchUndo, BeliefImage, undo_suffix
from engram.schemas.claims import ClaimsBatchFormed
from tests.support.episodes import turn
from tests.support.projecting import batch_of, claim

T = "t"


_VERB = {"lives_in": "live in", "uses": "use"}


def _said(text: str, seq: int, *claims: tuple[str, str], project: str = "p1") -> ClaimsBatchFormed:
    """Ana's turn at minute ``seq`` stating each (relation, object)."""
    quoted = [claim("I", rel, obj, f"I {_VERB[rel]} {obj}") for rel, obj in claims]
    return batch_of(turn(T, "ana", project, text, seq=seq), *quoted)


def test_an_image_covers_every_column_resolution_changes() -> None:
    assert tuple(f.name for f in fields(BeliefImage))[1:] == MUTABLE_BELIEF_COLUMNS


def test_a_batch_records_what_it_created_and_what_it_changed_as_it_was_before() -> None:
    state = BeliefState()
    first = _said("I live in Cork. I use Vim.", 1, ("lives_in", "Cork"), ("uses", "Vim"))
    second = batch_of(
        turn(T, "ana", "p2", "I live in Oslo. I no longer use vim.", seq=2),
        claim("I", "lives_in", "Oslo", "I live in Oslo"),
        claim("I", "uses", "vim", "I no longer use vim", polarity="retract"),
    )
    _, [made, moved] = resolve_chunk(state, [first, second])
    assert len(made.undo.beliefs_created) == 2 and len(made.undo.entities_created) == 2
    assert not made.undo.beliefs_before and not made.undo.aliases_before
    cork = next(b for b in state.beliefs.values() if b.object_text == "Cork")
    vim = next(b for b in state.beliefs.values() if b.object_text == "Vim")
    before = {image.belief_id: image for image in moved.undo.beliefs_before}
    assert set(before) == {cork.belief_id, vim.belief_id}
    assert before[cork.belief_id].status == "active" and cork.status == "superseded"
    assert before[vim.belief_id].valid_to is None and vim.valid_to is not None
    [alias] = moved.undo.aliases_before
    assert alias.aliases == [] and state.entities[(T, "ana", "vim")].aliases == ["vim"]
    assert BatchUndo.from_json(moved.undo.to_json()) == moved.undo


def test_a_suffix_restores_each_older_row_to_its_earliest_image_and_drops_what_it_made() -> None:
    state = BeliefState()
    batches = [
        _said("I live in Cork.", 1, ("lives_in", "Cork")),
        _said("I live in Oslo.", 2, ("lives_in", "Oslo")),
        _said("I live in Riga.", 3, ("lives_in", "Riga")),
    ]
    _, outcomes = resolve_chunk(state, batches)
    merged = undo_suffix(o.undo for o in outcomes[1:])
    [cork] = outcomes[0].undo.beliefs_created
    assert set(merged.beliefs_before) == {cork}  # Oslo was made by the suffix: deleted, not imaged
    assert merged.beliefs_before[cork].status == "active"
    assert merged.beliefs_created == {
        *outcomes[1].undo.beliefs_created,
        *outcomes[2].undo.beliefs_created,
    }
