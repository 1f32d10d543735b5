"""Cursors: the last row's sort key, handed back unchanged; anything else is refused."""

from __future__ import annotations

import base64
import uuid
from datetime import UTC, datetime

import pytest

from engram.projections.reads.cursor import (
    InvalidCursor,
    decode_cursor,
    decode_score_cursor,
    encode_cursor,
)

AT = datetime(2026, 11, 30, 23, 59, 59, 123456, tzinfo=UTC)
KEY = uuid.UUID("6f1c8a52-3d0e-4e57-9a1b-2b8f6c0e9d41")


def test_a_cursor_gives_back_exactly_the_key_it_was_made_from() -> None:
    cursor = encode_cursor("beliefs", AT, KEY)
    assert decode_cursor("beliefs", cursor) == (AT, KEY)
    assert "=" not in cursor and "/" not in cursor and "+" not in cursor  # safe in a query


def test_a_cursor_of_another_list_is_refused_and_says_so() -> None:
    with pytest.raises(InvalidCursor, match="another list"):
        decode_cursor("runs", encode_cursor("beliefs", AT, KEY))


@pytest.mark.parametrize(
    "cursor",
    [
        "not-a-cursor",
        "",
        base64.urlsafe_b64encode(b'["beliefs", "yesterday", "x"]').decode(),
        base64.urlsafe_b64encode(
            b'["beliefs", "2026-11-30T00:00:00", "' + str(KEY).encode() + b'"]'
        ).decode(),
        base64.urlsafe_b64encode(b'{"kind": "beliefs"}').decode(),
        base64.urlsafe_b64encode(b"[]").decode(),
    ],
)
def test_anything_the_api_did_not_hand_out_is_an_invalid_cursor(cursor: str) -> None:
    with pytest.raises(InvalidCursor):
        decode_cursor("beliefs", cursor)


def test_a_ranked_cursor_keeps_its_exact_score_and_is_refused_by_the_time_ordered_lists() -> None:
    score = 0.1 + 0.2  # not representable in a short decimal: the round trip must be exact
    cursor = encode_cursor("search", score, KEY)
    assert decode_score_cursor("search", cursor) == (score, KEY)
    with pytest.raises(InvalidCursor, match="another list"):
        decode_cursor("beliefs", cursor)
    with pytest.raises(InvalidCursor, match="another list"):
        decode_score_cursor("search", encode_cursor("beliefs", AT, KEY))


def test_a_ranked_cursor_whose_score_is_not_a_float_is_refused() -> None:
    raw = b'["search", "0.5", "' + str(KEY).encode() + b'"]'
    with pytest.raises(InvalidCursor):
        decode_score_cursor("search", base64.urlsafe_b64encode(raw).decode())
