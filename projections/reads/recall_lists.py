"""Recall's candidate lists: the messages a question's words, its meaning and its dates find.

The second stage of :func:`engram.projections.reads.recall.recall`, after the question is read:

- the **lexical** list, Okapi BM25 over the principal's messages in scope
  (:func:`engram.projections.messages.best_messages`), or, for a question that is only a date,
  the messages said in its periods in the order said (:func:`said_during`);
- the **semantic** list, with a :class:`SemanticQuery`: the principal's messages in scope
  nearest the question in the active embedding generation (:func:`semantic_messages`).

Each list holds at most :data:`CANDIDATES` messages, with its scores (BM25, cosine) and the
messages' rows, which the later stages read (a message's session, its time, its content). How
they are combined is :func:`engram.projections.reads.recall.rank_messages`'s.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import cast

import asyncpg

from engram.projections.messages import (
    Statistics,
    Vectors,
    best_messages,
    message_of_item,
    resident_vectors,
)
from engram.projections.reads.fusion import ranks
from engram.projections.reads.when import Period

CANDIDATES = 100
"""Hits taken from each ranked list before fusion: more than a page needs, few enough that a
question costs the same at any memory size (the lists are read through their indexes)."""
SEMANTIC_CANDIDATES = 3 * CANDIDATES
"""Nearest vectors taken before the role and project filter cuts them to :data:`CANDIDATES`
(vectors are kept for every role; recall answers with the principal's own unless asked)."""
SEMANTIC_WEIGHT = 0.75
"""The semantic list's weight where it is combined with the lexical list by score
(:func:`fusion.combine`: BM25 scaled by the best, the cosine between the list's last and first).
Chosen on the dev split with ``bench/embedding_models.py`` (``combined@w``, docs/retrieval.md)."""

MessageId = tuple[uuid.UUID, int]
"""A message: its turn's event id and its ordinal in the turn."""


@dataclass(frozen=True, slots=True)
class SemanticQuery:
    """A question as one embedding generation's model embedded it: searched only in that
    generation (:class:`engram.projections.messages.embeddings.store.EmbeddingGenerationNotBuilt` while it is building,
    :class:`engram.projections.messages.embeddings.store.UnknownEmbeddingGeneration` if there is none by that name)."""

    generation: str
    vector: Vectors
    weight: float = SEMANTIC_WEIGHT


@dataclass(frozen=True, slots=True)
class Scope:
    """Whose messages a question is answered from: the principal's, of these roles, in one
    project or all."""

    tenant: str
    principal: str
    role_names: list[str]
    project: str | None


_IN_SCOPE = """
SELECT m.project, m.session, m.episode_id, m.message_ordinal, m.role, m.author, m.content,
       m.occurred_at, m.source_partition, m.source_offset
FROM unnest($3::uuid[], $4::int[]) AS k(episode_id, message_ordinal)
JOIN message m ON m.tenant = $1 AND m.principal = $2
 AND m.episode_id = k.episode_id AND m.message_ordinal = k.message_ordinal
WHERE m.role = ANY($5::text[]) AND ($6::text IS NULL OR m.project = $6)
"""
"""The indexed messages among the given ones, in scope (a message the index has not reached, or
has left out, is not answered with)."""


async def messages_in_scope(
    conn: asyncpg.Connection, ids: Sequence[MessageId], scope: Scope
) -> list[asyncpg.Record]:
    """The indexed rows of ``ids`` the question's scope allows (:data:`_IN_SCOPE`)."""
    rows: list[asyncpg.Record] = await conn.fetch(
        _IN_SCOPE,
        scope.tenant,
        scope.principal,
        [e for e, _ in ids],
        [o for _, o in ids],
        scope.role_names,
        scope.project,
    )
    return rows


async def semantic_messages(
    conn: asyncpg.Connection,
    semantic: SemanticQuery,
    *,
    tenant: str,
    principal: str,
    role_names: list[str],
    project: str | None,
) -> tuple[list[tuple[MessageId, float]], list[asyncpg.Record]]:
    """The semantic list of messages in scope, best first, each with its cosine, and their
    rows (only messages this generation's index holds: hidden ones never answer): the first
    :data:`CANDIDATES` in scope of the :data:`SEMANTIC_CANDIDATES` nearest. The nearest are
    scoped :data:`CANDIDATES` at a time, best first, until that many are in scope — usually
    the first step (vectors are made of the principal's own words by default), which reads a
    third of the rows scoping all of them would (docs/benchmarks.md, "Recall under load")."""
    similar = await resident_vectors.search(
        conn,
        tenant,
        principal,
        "message",
        semantic.vector,
        limit=SEMANTIC_CANDIDATES,
        generation=semantic.generation,
    )
    scope = Scope(tenant, principal, role_names, project)
    kept: list[tuple[MessageId, float]] = []
    rows: list[asyncpg.Record] = []
    for start in range(0, len(similar.hits), CANDIDATES):
        step = [
            (message_of_item(hit.item_id), hit.score)
            for hit in similar.hits[start : start + CANDIDATES]
        ]
        found = await messages_in_scope(conn, [m for m, _ in step], scope)
        held = {(r["episode_id"], r["message_ordinal"]) for r in found}
        kept += [(m, score) for m, score in step if m in held]
        rows += found
        if len(kept) >= CANDIDATES:
            break
    return kept[:CANDIDATES], rows


_DURING = """
SELECT m.project, m.session, m.episode_id, m.message_ordinal, m.role, m.author, m.content,
       m.occurred_at, m.source_partition, m.source_offset,
       1.0::float8 - row_number() OVER (ORDER BY m.occurred_at, m.source_offset,
                                        m.message_ordinal)::float8 / ($7::float8 + 1) AS score
FROM message m
WHERE m.tenant = $1 AND m.principal = $2 AND m.role = ANY($3::text[])
  AND ($4::text IS NULL OR m.project = $4) AND m.occurred_at >= $5 AND m.occurred_at < $6
ORDER BY m.occurred_at, m.source_offset, m.message_ordinal
LIMIT $7
"""
"""The first ``$7`` messages in scope said in ``[$5, $6)``, in the order they were said, each
scored below the one before (read through ``message_principal_time``)."""


async def said_during(
    conn: asyncpg.Connection, named: Sequence[Period], scope: Scope
) -> list[asyncpg.Record]:
    """The messages said in the periods a question of only a date names, in the order said
    (the first :data:`CANDIDATES` of each period), as the list its words would have given."""
    found: dict[MessageId, asyncpg.Record] = {}
    for period in named:
        for row in await conn.fetch(
            _DURING,
            scope.tenant,
            scope.principal,
            scope.role_names,
            scope.project,
            period.start,
            period.end,
            CANDIDATES,
        ):
            found.setdefault((row["episode_id"], row["message_ordinal"]), row)
    return list(found.values())[:CANDIDATES]


def said_in(rows: Mapping[MessageId, asyncpg.Record], named: Sequence[Period]) -> list[MessageId]:
    """The candidates said in one of the periods a question names."""
    return [m for m, row in rows.items() if any(p.holds(row["occurred_at"]) for p in named)]


@dataclass(frozen=True)
class Candidates:
    """A question's candidate lists: the lexical one (or, for a question of only a date, the
    messages said then), the semantic one (empty without a :class:`SemanticQuery`), each best
    first with its scores, and every candidate's row."""

    lexical: list[tuple[MessageId, float]]
    semantic: list[tuple[MessageId, float]]
    rows: dict[MessageId, asyncpg.Record]
    only_time: bool
    """The lexical list is the period's messages in the order said, not a match of words:
    no message has a lexical rank."""

    @cached_property
    def lexical_rank(self) -> dict[MessageId, int]:
        return {} if self.only_time else ranks([m for m, _ in self.lexical])

    @cached_property
    def semantic_rank(self) -> dict[MessageId, int]:
        return ranks([m for m, _ in self.semantic])

    @cached_property
    def sessions(self) -> dict[MessageId, tuple[str, str]]:
        """Each candidate's session (its project and session)."""
        return {m: (r["project"], r["session"]) for m, r in self.rows.items()}


async def candidate_lists(
    conn: asyncpg.Connection,
    stats: Statistics,
    scope: Scope,
    *,
    named: Sequence[Period],
    semantic: SemanticQuery | None,
    only_time: bool,
) -> Candidates:
    """The lexical list (or, ``only_time``, the messages said in the ``named`` periods) and,
    with ``semantic``, the semantic list, with their rows (a message in both keeps the lexical
    list's row)."""
    if only_time:
        lexical_rows = await said_during(conn, named, scope)
    else:
        lexical_rows = (
            await best_messages(
                conn,
                stats,
                tenant=scope.tenant,
                principal=scope.principal,
                roles=scope.role_names,
                project=scope.project,
                limit=CANDIDATES,
            )
        ).rows
    near: list[tuple[MessageId, float]] = []
    near_rows: list[asyncpg.Record] = []
    if semantic is not None:
        near, near_rows = await semantic_messages(
            conn,
            semantic,
            tenant=scope.tenant,
            principal=scope.principal,
            role_names=scope.role_names,
            project=scope.project,
        )
    rows = {(r["episode_id"], r["message_ordinal"]): r for r in (*near_rows, *lexical_rows)}
    lexical = [
        ((r["episode_id"], r["message_ordinal"]), cast(float, r["score"])) for r in lexical_rows
    ]
    return Candidates(lexical, near, rows, only_time)
