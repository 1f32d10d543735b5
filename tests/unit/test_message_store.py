"""The pure parts of the message index: the rows a log record adds, and the messages a
deletion's redaction takes out of it."""

from __future__ import annotations

import uuid

import orjson

from engram.formation.corrections import candidate_hash
from engram.projections.messages.store import LogRecord, MessageKey, messages_of, redacted_messages
from engram.schemas.corrections import PrincipalForgotten
from tests.support.episodes import EPOCH, turn
from tests.support.projecting import batch_of, claim


def test_every_message_of_a_turn_is_a_row_with_its_place_and_a_forgetting_is_kept_in_order() -> (
    None
):
    said = turn("t", "ana", "p", "I use Vim.", "Nice.", roles=("user", "assistant"), session="s9")
    forget = PrincipalForgotten(
        event_id=uuid.UUID(int=1),
        tenant="t",
        principal="ana",
        project="p",
        session="s",
        occurred_at=EPOCH,
    )
    changes = messages_of(
        [
            LogRecord(2, 10, said.model_dump_json().encode()),
            LogRecord(2, 11, b"{not json"),
            LogRecord(2, 12, orjson.dumps(forget.model_dump(mode="json"))),
        ]
    )
    assert [
        (r.role, r.content, r.session, r.source_partition, r.source_offset) for r in changes.rows
    ] == [
        ("user", "I use Vim.", "s9", 2, 10),
        ("assistant", "Nice.", "s9", 2, 10),
    ]
    assert {r.episode_id for r in changes.rows} == {said.event_id}
    assert changes.forgotten == [("t", "ana")]


def test_redaction_names_the_messages_and_quotes_of_deleted_content_and_nothing_else() -> None:
    zanzibar = claim("I", "lives_in", "Zanzibar", "I live in Zanzibar")
    first = batch_of(
        turn("t", "ana", "p", "I live in Zanzibar. I use Vim."),
        zanzibar,
        claim("I", "uses", "Vim", "I use Vim"),
    )
    other = batch_of(
        turn("t", "ana", "p", "I use Emacs.", seq=1), claim("I", "uses", "Emacs", "I use Emacs")
    )
    [doomed] = [c for c in first.candidates if c.relation == "lives_in"]
    tombstones = [("t", "ana", candidate_hash(doomed))]

    assert redacted_messages([first, other], tombstones) == (
        [MessageKey("t", "ana", first.episode_id, 0)],
        ["I live in Zanzibar"],
    )
    assert redacted_messages([first, other], []) == ([], [])
    assert redacted_messages([first], [("t", "bo", candidate_hash(doomed))]) == ([], [])
