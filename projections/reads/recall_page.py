"""Recall's last stage: the ranked beliefs and messages as hits, one page of them by keyset.

Every hit has the sort key ``tier + fused`` (tier 1 for a belief, 0 for a message; a fused
score is below 1, so every belief precedes every message) and an id (the belief's, or a
name-based UUID of the message's event id and ordinal, :func:`message_uuid`); hits are served
by that key descending, then the id ascending, and a cursor holds the last hit's key and id.
While memory stands still the pages walk every hit once. Pure but :func:`reflects`.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import asyncpg

from engram.projections.reads.cursor import encode_cursor
from engram.projections.reads.freshness import freshness
from engram.projections.reads.fusion import fuse, ranks
from engram.projections.reads.recall_lists import Candidates, MessageId
from engram.projections.reads.session_messages import message_fields
from engram.schemas.api import (
    BeliefView,
    Freshness,
    RecalledBelief,
    RecalledMessage,
)
from engram.schemas.common import Role

CURSOR_KIND = "recall"
OWN_WORDS: tuple[Role, ...] = (Role.USER,)
"""Whose words recall answers with unless asked: only ``user`` speaks for the principal."""


@dataclass(frozen=True)
class Ranked:
    """A hit with its place in the answer: its sort key and its id (see the module's docstring)."""

    sort_key: float
    key: uuid.UUID
    hit: RecalledBelief | RecalledMessage


def message_uuid(episode_id: uuid.UUID, ordinal: int) -> uuid.UUID:
    """A message's id in a recall cursor: name-based, so the same message always has it."""
    return uuid.uuid5(episode_id, f"message/{ordinal}")


def belief_hits(beliefs: Sequence[BeliefView]) -> list[Ranked]:
    """The beliefs shown, in their order, each in tier 1."""
    belief_lexical = ranks([b.belief_id for b in beliefs])
    by_id = {b.belief_id: b for b in beliefs}
    ranked = []
    for belief_id, fused in fuse([[b.belief_id for b in beliefs]]):
        hit = RecalledBelief(
            fused=fused, lexical_rank=belief_lexical.get(belief_id), belief=by_id[belief_id]
        )
        ranked.append(Ranked(1.0 + fused, belief_id, hit))
    return ranked


def message_hits(
    messages: Sequence[tuple[MessageId, float]],
    candidates: Candidates,
    quoted_rank: Mapping[MessageId, int],
) -> list[Ranked]:
    """The ranked messages (each with its fused score, in tier 0), each saying where every list
    placed it and where it stands among the shown beliefs' quotes (``quoted_rank``)."""
    return [_message_hit(m, fused, candidates, quoted_rank) for m, fused in messages]


def _message_hit(
    message: MessageId,
    fused: float,
    candidates: Candidates,
    quoted_rank: Mapping[MessageId, int],
) -> Ranked:
    row = candidates.rows[message]
    hit = RecalledMessage(
        fused=fused,
        lexical_rank=candidates.lexical_rank.get(message),
        quoted_rank=quoted_rank.get(message),
        semantic_rank=candidates.semantic_rank.get(message),
        own_words=Role(row["role"]) in OWN_WORDS,
        **message_fields(row),
    )
    return Ranked(fused, message_uuid(*message), hit)


def page_of(
    ranked: Sequence[Ranked], after: tuple[float, uuid.UUID] | None, limit: int
) -> tuple[list[Ranked], str | None]:
    """The page of ``limit`` hits after the cursor's (``after``: its sort key and id), in the
    answer's order, and the cursor of the next page (None on the last)."""
    ordered = sorted(ranked, key=lambda r: (-r.sort_key, r.key))
    if after is not None:
        key, last = after
        ordered = [r for r in ordered if r.sort_key < key or (r.sort_key == key and r.key > last)]
    page = ordered[:limit]
    more = len(ordered) > limit
    next_cursor = encode_cursor(CURSOR_KIND, page[-1].sort_key, page[-1].key) if more else None
    return page, next_cursor


async def reflects(
    conn: asyncpg.Connection, tenant: str, page: Sequence[Ranked]
) -> list[Freshness]:
    """The freshness each project of the page's hits was read at."""
    projects = sorted({p for p in map(project_of, page) if p is not None})
    return [await freshness(conn, tenant=tenant, project=p) for p in projects]


def project_of(ranked: Ranked) -> str | None:
    """The project a hit comes from: a message's own; a belief's if it is scoped to one project
    (``project:<name>``), else None (a belief scoped wider than one project)."""
    hit = ranked.hit
    if isinstance(hit, RecalledMessage):
        return hit.project
    scope = hit.belief.scope
    return scope.removeprefix("project:") if scope.startswith("project:") else None
