"""Admission at the inbox: the same contract and size measure as every other door, and
refusals that say why without keeping a byte of what was refused."""

from __future__ import annotations

import hashlib
import uuid

import orjson
import pytest

from engram.ingest.inbox import InboxRefusal, InboxRefusalReason, admit_inbox_record
from engram.schemas.episodes import TurnAppended
from tests.support.episodes import turn

LIMIT = 4096


def _refused(raw: bytes | None) -> InboxRefusal:
    admitted = admit_inbox_record(raw, max_bytes=LIMIT)
    assert isinstance(admitted, InboxRefusal), admitted
    return admitted


def test_a_valid_turn_is_admitted_as_the_episode_it_encodes() -> None:
    spoken = turn("t", "ana", "p", "I live in Lisbon.")
    admitted = admit_inbox_record(spoken.model_dump_json().encode(), max_bytes=LIMIT)
    assert admitted == spoken


@pytest.mark.parametrize(
    ("raw", "reason"),
    [
        (None, InboxRefusalReason.NOT_EPISODE),
        (b"", InboxRefusalReason.NOT_EPISODE),
        (b"\xff\xfe", InboxRefusalReason.NOT_UTF8),
        (b"not json", InboxRefusalReason.NOT_EPISODE),
        (b"[]", InboxRefusalReason.NOT_EPISODE),
        (b'{"type": "turn.appended"}', InboxRefusalReason.NOT_EPISODE),
    ],
)
def test_what_is_not_an_episode_is_refused_with_its_reason(
    raw: bytes | None, reason: InboxRefusalReason
) -> None:
    refusal = _refused(raw)
    assert refusal.reason is reason
    assert refusal.size == len(raw or b"")
    assert refusal.sha256 == hashlib.sha256(raw or b"").hexdigest()


def test_a_correction_cannot_come_through_the_inbox() -> None:
    correction = {"type": "correction.applied", "event_id": str(uuid.UUID(int=1))}
    assert _refused(orjson.dumps(correction)).reason is InboxRefusalReason.NOT_EPISODE


def test_a_nul_in_the_words_is_refused_by_the_text_contract_and_named() -> None:
    spoken = turn("t", "ana", "p", "ok").model_dump(mode="json")
    spoken["messages"][0]["content"] = "secret\u0000word"
    refusal = _refused(orjson.dumps(spoken))
    assert refusal.reason is InboxRefusalReason.NOT_EPISODE
    assert refusal.detail.startswith("turn.appended.messages.0.content")


def test_an_oversized_record_is_refused_before_it_is_parsed() -> None:
    refusal = _refused(b"x" * (LIMIT + 1))
    assert refusal.reason is InboxRefusalReason.OVERSIZED
    assert str(LIMIT) in refusal.detail


def test_a_refusal_never_carries_the_words_it_refused() -> None:
    spoken = turn("t", "ana", "p", "my password is hunter2").model_dump(mode="json")
    spoken["tenant"] = ""  # invalid, so refused
    refusal = _refused(orjson.dumps(spoken))
    headers = refusal.headers(topic="engram.inbox", partition=2, offset=7)
    said = b" ".join(value for _, value in headers) + refusal.detail.encode()
    assert b"hunter2" not in said
    assert dict(headers)["engram.source.offset"] == b"7"


def test_the_episode_type_the_inbox_admits_is_a_producers_episode() -> None:
    spoken = turn("t", "ana", "p", "hi")
    assert isinstance(
        admit_inbox_record(spoken.model_dump_json().encode(), max_bytes=LIMIT), TurnAppended
    )
