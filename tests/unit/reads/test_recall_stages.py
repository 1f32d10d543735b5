"""Recall's stages that decide without I/O: the request read, the semantic list's weight, the
page cut by keyset."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime

import numpy as np
import pytest

from engram.projections.reads.cursor import InvalidCursor, decode_score_cursor
from engram.projections.reads.recall import (
    FOREIGN_LEXICAL_WEIGHT,
    MAX_LIMIT,
    OWN_WORDS,
    SemanticQuery,
    read_request,
    semantic_weight,
)
from engram.projections.reads.recall_page import CURSOR_KIND, Ranked, page_of
from engram.projections.reads.search import UnsearchableQuery
from engram.schemas.api import RecalledMessage
from engram.schemas.common import Role

ASKED = datetime(2024, 6, 15, tzinfo=UTC)


def test_a_request_is_checked_in_the_order_the_caller_can_fix_it() -> None:
    with pytest.raises(ValueError, match="limit must be"):
        read_request("tea", roles=OWN_WORDS, limit=MAX_LIMIT + 1, cursor=None, asked_at=ASKED)
    with pytest.raises(ValueError, match="roles must name"):
        read_request("tea", roles=(), limit=10, cursor=None, asked_at=ASKED)
    with pytest.raises(UnsearchableQuery, match="U\\+0007"):
        read_request("tea\x07", roles=OWN_WORDS, limit=10, cursor=None, asked_at=ASKED)
    with pytest.raises(InvalidCursor):
        read_request("tea", roles=OWN_WORDS, limit=10, cursor="nonsense", asked_at=ASKED)


def test_a_request_reads_its_roles_once_sorted_and_its_periods_as_of_its_date() -> None:
    request = read_request(
        "  what did I plant last May? ",
        roles=(Role.USER, Role.ASSISTANT, Role.USER),
        limit=10,
        cursor=None,
        asked_at=ASKED,
    )
    assert request.query == "what did I plant last May?"
    assert request.role_names == ["assistant", "user"]
    assert request.after is None
    [may] = request.timed.periods
    assert (may.start, may.end) == (
        datetime(2024, 5, 1, tzinfo=UTC),
        datetime(2024, 6, 1, tzinfo=UTC),
    )
    assert "May" not in request.timed.words


def _semantic(weight: float = 0.75) -> SemanticQuery:
    return SemanticQuery("model/8/recipe", np.zeros((1, 8), dtype=np.float32), weight)


def test_the_semantic_weight_is_the_querys_and_grows_for_another_language() -> None:
    assert semantic_weight(None, "en") == 0.0
    assert semantic_weight(None, "pt") == 0.0
    assert semantic_weight(_semantic(), "en") == 0.75
    assert semantic_weight(_semantic(), "pt") == 0.75 / FOREIGN_LEXICAL_WEIGHT
    assert semantic_weight(_semantic(), "es", foreign_lexical_weight=1.0) == 0.75
    assert semantic_weight(_semantic(), "es", foreign_lexical_weight=0.0) == 0.75 / 1e-6


def _hit(key: float, name: str) -> Ranked:
    event = uuid.uuid5(uuid.NAMESPACE_URL, name)
    hit = RecalledMessage(
        fused=key, lexical_rank=None, quoted_rank=None, semantic_rank=None, event_id=event,
        message_ordinal=0, role=Role.USER, own_words=True, author=None, project="p",
        session="s", occurred_at=ASKED, partition=0, offset=0, content=name,
    )  # fmt: skip
    return Ranked(key, event, hit)


def test_pages_walk_every_hit_once_by_key_then_id() -> None:
    hits = [_hit(0.5, "a"), _hit(0.9, "b"), _hit(0.5, "c"), _hit(0.1, "d"), _hit(0.5, "e")]
    expected = sorted(hits, key=lambda r: (-r.sort_key, r.key))
    walked: list[Ranked] = []
    after = None
    while True:
        page, cursor = page_of(hits, after, 2)
        walked.extend(page)
        if cursor is None:
            break
        after = decode_score_cursor(CURSOR_KIND, cursor)
    assert walked == expected
    assert page_of(hits, None, 10) == (expected, None)
