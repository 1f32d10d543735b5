"""What a search query and cursor must be before they reach PostgreSQL: refused with a reason
that names the field, never passed on to fail there."""

from __future__ import annotations

import base64
import uuid

import pytest

from projections.search import (
    MAX_QUERY_CHARS,
    After,
    InvalidCursor,
    UnsearchableQuery,
    check_query,
)


def test_a_query_is_searched_stripped() -> None:
    assert check_query("  where do I live \n") == "where do I live"


@pytest.mark.parametrize(
    ("query", "reason"),
    [
        ("", "blank"),
        (" \t\n", "blank"),
        ("x" * (MAX_QUERY_CHARS + 1), "over"),
        ("Lisbon\x00", "NUL"),
        ("Lisbon \ud800", "Unicode"),
    ],
)
def test_a_query_postgresql_cannot_hold_is_refused_naming_q(query: str, reason: str) -> None:
    with pytest.raises(UnsearchableQuery, match=reason) as refused:
        check_query(query)
    assert str(refused.value).startswith("q ")


def test_a_cursor_round_trips_the_exact_score_and_id() -> None:
    after = After(0.1 + 0.2, uuid.uuid4())
    assert After.decode(after.encode()) == after


@pytest.mark.parametrize(
    "cursor",
    [
        "garbage!",
        "",
        base64.urlsafe_b64encode(b"[1, 2, 3]").decode(),
        base64.urlsafe_b64encode(b'[1, "not-a-uuid"]').decode(),
        base64.urlsafe_b64encode(b'["0.5", "00000000-0000-0000-0000-000000000000"]').decode(),
        base64.urlsafe_b64encode(b'{"score": 0.5}').decode(),
        base64.urlsafe_b64encode(b"\xff\xfe").decode(),
    ],
)
def test_a_cursor_not_issued_here_is_refused(cursor: str) -> None:
    with pytest.raises(InvalidCursor, match="cursor"):
        After.decode(cursor)
