"""What a search query and cursor must be before they reach PostgreSQL: refused with a reason
that names the field, never passed on to fail there."""

from __future__ import annotations

import base64
import uuid

import pytest

from engram.projections.reads.search import (
    MAX_QUERY_CHARS,
    After,
    InvalidCursor,
    UnsearchableQuery,
    check_query,
    question_words,
)
from engram.schemas.api import SearchMode


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


@pytest.mark.parametrize("mode", list(SearchMode))
def test_a_cursor_round_trips_the_exact_sort_key_and_id(mode: SearchMode) -> None:
    after = After(mode, 0.1 + 0.2, uuid.uuid4())
    assert After.decode(mode, after.encode()) == after


def test_a_cursor_of_one_mode_is_refused_by_the_other() -> None:
    """The modes order by different keys: a cursor carried across would skip or repeat hits."""
    after = After(SearchMode.ANY, 2.5, uuid.uuid4())
    with pytest.raises(InvalidCursor, match="another list"):
        After.decode(SearchMode.ALL, after.encode())


def test_a_question_keeps_its_content_words_once_without_the_principals_name() -> None:
    words = question_words("What kind of music would Ana-Sofia like? Music!", "ana-sofia")
    assert words == ["what", "of", "music", "like"]  # stop words are left to PostgreSQL


def test_job_words_also_look_for_the_role_vocabulary() -> None:
    assert question_words("What is my job?", "p1") == ["what", "is", "my", "job", "role"]
    assert question_words("career, work", "p1") == ["career", "role", "work"]


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
        After.decode(SearchMode.ANY, cursor)
