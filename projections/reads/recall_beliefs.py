"""Which beliefs recall shows: those the question's words find (:func:`answering`) whose own
source the messages' ranking puts near the top (:func:`supported`).

Every belief is shown before every message, so each one shown pushes every message down: the
two filters keep the beliefs that are the answer, distilled, and leave out those that merely
share a word with the question. Both were chosen on the dev split (docs/retrieval.md, "Which
beliefs are shown").
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping, Sequence, Set

import asyncpg

from engram.projections.reads.recall_lists import (
    CANDIDATES,
    MessageId,
    Scope,
    messages_in_scope,
)
from engram.projections.reads.search import UnsearchableQuery, search_beliefs
from engram.schemas.api import BeliefView, SearchMode

MIN_MATCHED_TERMS = 2
"""How many of a question's terms a belief matches to answer it, whatever their weight."""

SUPPORT_MESSAGES = 5
"""How near the top of the messages' ranking a belief's quoted message must be for the belief
to be shown (:func:`supported`): half of a first page of ten. Measured in docs/retrieval.md."""

_BELIEF_TERMS = """
SELECT b.belief_id, array_agg(v.lexeme ORDER BY v.lexeme) AS lexemes
FROM belief b, unnest(b.search_vector) v
WHERE b.belief_id = ANY($1::uuid[]) AND v.lexeme = ANY($2::text[])
GROUP BY b.belief_id
"""
"""Which of the question's terms each candidate belief holds."""


def answering(
    matched: Mapping[uuid.UUID, Sequence[str]], idf: Mapping[str, float]
) -> set[uuid.UUID]:
    """The beliefs that answer: those matching two or more of the question's terms (its one
    term, for a one-term question), or holding its rarest term (the highest idf; ties count).
    Beliefs come first, so each one shown pushes every message down: one sharing a single
    common word with a longer question ("live" in "where do I live and what did I bring back
    from Japan") is rarely about it, while one holding the question's rarest word — "Lisbon" of
    "Lisbon or tea", and "tea" too — is. Measured in docs/retrieval.md."""
    if not idf:
        return set()
    rarest = max(idf.values())
    enough = min(MIN_MATCHED_TERMS, len(idf))
    return {
        belief
        for belief, terms in matched.items()
        if len(set(terms)) >= enough or any(idf.get(t, 0.0) >= rarest * (1 - 1e-9) for t in terms)
    }


async def answering_beliefs(
    conn: asyncpg.Connection,
    tenant: str,
    principal: str,
    words: str,
    project: str | None,
    idf: Mapping[str, float],
    semantic: bool,
) -> list[BeliefView]:
    """The beliefs shown (:func:`answering`), best first. A question with no word to match is
    :class:`UnsearchableQuery` — unless it is asked semantically too (``semantic``), when the
    semantic list answers it and no belief is shown."""
    try:
        beliefs = await search_beliefs(
            conn,
            tenant=tenant,
            principal=principal,
            query=words or "?",
            mode=SearchMode.ANY,
            project=project,
            limit=CANDIDATES,
        )
    except UnsearchableQuery:
        if semantic:
            return []
        raise
    candidates = [h.belief.belief_id for h in beliefs.hits]
    matched = {
        row["belief_id"]: row["lexemes"]
        for row in await conn.fetch(_BELIEF_TERMS, candidates, list(idf))
    }
    shown = answering(matched, idf)
    return [h.belief for h in beliefs.hits if h.belief.belief_id in shown]


def supported(
    beliefs: Sequence[BeliefView], first: Sequence[MessageId], ranked: Set[MessageId]
) -> list[BeliefView]:
    """The beliefs, in their order, that quote one of ``first`` (the messages ranked first for
    the question, :data:`SUPPORT_MESSAGES` of them), or none of whose quotes the messages'
    ranking could hold (``ranked``: the indexed messages in the question's scope among them: a
    belief told through ``remember`` or ``correct``, or quoting another role's words, is not
    judged by a ranking of messages it has none in). Every belief is shown before every message,
    so a belief matched by the question's words but formed from a message its words and meaning
    do not rank near the top (a stray shared word, another occasion of the same thing) would
    push the message that answers down; one whose own source ranks near the top is the same
    answer, distilled."""
    top = set(first)
    shown = []
    for belief in beliefs:
        quotes = {(e.episode_id, e.message_ordinal) for e in belief.evidence}
        if quotes & top or not quotes & ranked:
            shown.append(belief)
    return shown


def quoted(beliefs: Sequence[BeliefView]) -> list[MessageId]:
    """The messages the beliefs quote, belief by belief, quote by quote."""
    return [(e.episode_id, e.message_ordinal) for b in beliefs for e in b.evidence]


async def supported_beliefs(
    conn: asyncpg.Connection,
    beliefs: Sequence[BeliefView],
    messages: Sequence[tuple[MessageId, float]],
    scope: Scope,
) -> list[BeliefView]:
    """:func:`supported` against the messages' ranking (best first): the first
    :data:`SUPPORT_MESSAGES`, and which of the beliefs' quotes are indexed messages in scope."""
    in_scope = await messages_in_scope(conn, quoted(beliefs), scope)
    return supported(
        beliefs,
        [m for m, _ in messages[:SUPPORT_MESSAGES]],
        {(r["episode_id"], r["message_ordinal"]) for r in in_scope},
    )
