"""Recall: what answers a question about one principal — beliefs first, then messages.

One read for every surface (``GET /v1/recall``, ``engram recall``, the client, the MCP ``recall``
tool), scoped by tenant and principal in SQL like every other read, in the reader's generation.

**Beliefs** are the principal's current beliefs as search ranks them in mode ``any``
(:func:`engram.projections.reads.search.search_beliefs`: any matching term, more distinct terms first, then
relevance, confidence, corroboration and recency) that :func:`answering` keeps and whose quoted
message the messages' ranking puts among its first :data:`SUPPORT_MESSAGES` (:func:`supported`),
each with the quotes it came from.

**Messages** come from the index of messages (migration 0021, ``message``): by default only the
principal's own words (role ``user``); ``roles`` asks for others, and every message hit says its
role. The lists below are combined (:mod:`engram.projections.reads.fusion`, :func:`rank_messages`):

- the lexical match: the messages holding terms of the question, ranked by Okapi BM25 over the
  principal's messages in scope (:mod:`engram.projections.messages.lexical`, read from postings and counts the
  indexer keeps): a rare word outweighs a common one, a repeated word counts with diminishing
  returns, a long message is discounted;
- with a :class:`SemanticQuery` (the question embedded by the active embedding generation's
  model, :func:`embed_question`), the semantic match: the principal's messages in scope nearest
  the question by cosine similarity (:func:`engram.projections.messages.embeddings.store.search`, one generation, never
  two), combined with the lexical list by score (:func:`fusion.combine`) at weight
  :data:`SEMANTIC_WEIGHT` — below the lexical list's 1, because on these questions meaning
  alone finds less than words do (docs/retrieval.md measures it);
- each message raised by the best other hit of its session (:data:`SESSION_WEIGHT`), and the
  messages said in a period the question names fused in front.

**Pages.** The answer is ranked whole — at most :data:`CANDIDATES` of each list — and served in
pages by keyset: every hit has the sort key ``tier + fused`` (tier 1 for a belief, 0 for a
message; a fused score is below 1, so every belief precedes every message) and an id (the
belief's, or a name-based UUID of the message's event id and ordinal); the cursor holds the last
hit's key and id. While memory stands still the pages walk every hit once.
"""

from __future__ import annotations

import asyncio
import unicodedata
import uuid
from collections.abc import Hashable, Mapping, Sequence, Set
from dataclasses import dataclass
from datetime import UTC, datetime

import asyncpg

from engram.infra.errors import EngramFailure
from engram.projections.messages import (
    INDEX_LANGUAGE,
    Embedder,
    EmbeddingGeneration,
    Vectors,
    best_messages,
    embedding_store,
    message_of_item,
    question_statistics,
    read_spelling,
    resident_vectors,
)
from engram.projections.reads.cursor import InvalidCursor, decode_score_cursor, encode_cursor
from engram.projections.reads.freshness import freshness
from engram.projections.reads.fusion import combine, fuse, ranks, with_neighbours
from engram.projections.reads.search import (
    MAX_QUERY_CHARS,
    UnsearchableQuery,
    check_query,
    question_words,
    search_beliefs,
)
from engram.projections.reads.when import Period, periods
from engram.schemas.api import (
    BeliefView,
    RecalledBelief,
    RecalledMessage,
    RecallResults,
    SearchMode,
)
from engram.schemas.common import Role
from engram.watermarks.waiting import poll_until

__all__ = ["MAX_QUERY_CHARS", "IndexBehind", "InvalidCursor", "UnsearchableQuery", "recall"]

CANDIDATES = 100
"""Hits taken from each ranked list before fusion: more than a page needs, few enough that a
question costs the same at any memory size (the lists are read through their indexes)."""
MAX_LIMIT = 100
CURSOR_KIND = "recall"
OWN_WORDS: tuple[Role, ...] = (Role.USER,)
"""Whose words recall answers with unless asked: only ``user`` speaks for the principal."""
_ALLOWED_CONTROLS = frozenset("\t\n\r")

SEMANTIC_WEIGHT = 0.75
"""The semantic list's weight where it is combined with the lexical list by score
(:func:`fusion.combine`: BM25 scaled by the best, the cosine between the list's last and first).
Chosen on the dev split with ``bench/embedding_models.py`` (``combined@w``, docs/retrieval.md)."""
SEMANTIC_CANDIDATES = 3 * CANDIDATES
"""Nearest vectors taken before the role and project filter cuts them to :data:`CANDIDATES`
(vectors are kept for every role; recall answers with the principal's own unless asked)."""

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


MIN_MATCHED_TERMS = 2
"""How many of a question's terms a belief matches to answer it, whatever their weight."""


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

MessageId = tuple[uuid.UUID, int]
"""A message: its turn's event id and its ordinal in the turn."""


def message_uuid(episode_id: uuid.UUID, ordinal: int) -> uuid.UUID:
    """A message's id in a recall cursor: name-based, so the same message always has it."""
    return uuid.uuid5(episode_id, f"message/{ordinal}")


def check_recall_query(query: str) -> str:
    """The query as recalled: :func:`engram.projections.reads.search.check_query`'s checks, and no control
    characters but tab and line breaks (what a question can hold; anything else is a caller's
    bug or an attack on a terminal, refused by name)."""
    stripped = check_query(query)
    for char in stripped:
        if unicodedata.category(char) == "Cc" and char not in _ALLOWED_CONTROLS:
            raise UnsearchableQuery(f"q contains the control character U+{ord(char):04X}")
    return stripped


class IndexBehind(EngramFailure):
    """Formation or the message index had not read the whole project by the deadline."""

    code = "index_behind"
    retriable = True
    exit_code = 1


async def wait_indexed(
    conn: asyncpg.Connection, *, tenant: str, project: str, timeout_s: float
) -> None:
    """Return once formation has formed, and the message index (and the active embedding
    generation, if there is one) has read, every episode of ``project`` on the log (its
    freshness shows no lag), so a recall reflects all of it; :class:`IndexBehind` at the
    deadline."""

    async def caught_up() -> bool:
        fresh = await freshness(conn, tenant=tenant, project=project)
        return (
            fresh.log_offset is not None
            and fresh.lag_episodes == fresh.index_lag_episodes == fresh.embedding_lag_episodes == 0
        )

    if not await poll_until(caught_up, timeout_s=timeout_s):
        raise IndexBehind(
            f"{tenant}/{project} was not formed and indexed to the end of the log within "
            f"{timeout_s:g}s; `engram freshness --project {project}` shows how far each got"
        )


@dataclass(frozen=True)
class _Ranked:
    sort_key: float
    key: uuid.UUID
    hit: RecalledBelief | RecalledMessage


def rank_messages(
    lexical: Sequence[tuple[MessageId, float]],
    semantic: Sequence[tuple[MessageId, float]] = (),
    *,
    semantic_weight: float = SEMANTIC_WEIGHT,
    in_period: Sequence[MessageId] | None = None,
    session_of: Mapping[MessageId, Hashable] | None = None,
) -> list[tuple[MessageId, float]]:
    """The messages' one ranking. The lexical and semantic lists (each with its scores: BM25,
    cosine) are first combined by score (:func:`fusion.combine`, the semantic part weighted
    ``semantic_weight``); with ``session_of`` (each of those messages' session), a message is
    then raised by the best other hit of its session (:func:`fusion.with_neighbours`, weight
    :data:`SESSION_WEIGHT`). ``in_period`` (a question naming a time): which candidates were
    said in one of its periods; they are fused with that ranking by rank, as a list of their
    own in the order it gave them, so they come before the rest without leaving anyone out.

    The messages the shown beliefs quote are not a list of their own here: a belief is shown
    only when the words or meaning already rank what it quotes first (:func:`supported`), and
    raising that message again for the belief's sake pushed down the other answers (measured
    in docs/retrieval.md)."""
    scored = combine(lexical, semantic, semantic_weight=semantic_weight)
    if session_of is not None:
        scored = with_neighbours(scored, session_of.__getitem__, weight=SESSION_WEIGHT)
    matched = [m for m, _ in scored]
    fused = fuse([matched])
    if not in_period:
        return fused
    held = set(in_period)
    timely = [message for message, _ in fused if message in held]
    return fuse([matched, timely], weights=[1.0, PERIOD_WEIGHT])


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


SESSION_WEIGHT = 0.3
"""How much the best other hit of a message's session adds to its combined score
(:func:`fusion.with_neighbours`): a session is scored by its best-matching message, as a prior
for the others. Chosen on the dev split (docs/retrieval.md)."""

SUPPORT_MESSAGES = 5
"""How near the top of the messages' ranking a belief's quoted message must be for the belief
to be shown (:func:`supported`): half of a first page of ten. Measured in docs/retrieval.md."""


FOREIGN_LEXICAL_WEIGHT = 0.25
"""The lexical list's weight, against the semantic list's, for a question in another language
than the index's (English stems): its words match the messages' words only by accident (a
name, a cognate), while the multilingual model reads its meaning. Applied as the semantic
weight divided by it. Chosen on translated dev questions (docs/retrieval.md)."""

PERIOD_WEIGHT = 1.0
"""The weight of the list of candidates said in a period the question names: as much as the
others', so a message of that period outranks one of another that words and meaning rank
alike."""


@dataclass(frozen=True, slots=True)
class SemanticQuery:
    """A question as one embedding generation's model embedded it: searched only in that
    generation (:class:`engram.projections.messages.embeddings.store.EmbeddingGenerationNotBuilt` while it is building,
    :class:`engram.projections.messages.embeddings.store.UnknownEmbeddingGeneration` if there is none by that name)."""

    generation: str
    vector: Vectors
    weight: float = SEMANTIC_WEIGHT


async def embed_question(embedder: Embedder, query: str) -> SemanticQuery:
    """``query`` embedded as a question through the text recipe of ``embedder``'s generation
    (an asymmetric model embeds it as a query, the messages as documents). Call it before
    taking a connection: a remote embedder is a network call."""
    generation = EmbeddingGeneration.of(embedder.model)
    [vector] = await embedder.embed([generation.prepare(check_recall_query(query))], "query")
    return SemanticQuery(generation.name, vector)


async def semantic_query(
    conn: asyncpg.Connection, embedder: Embedder | None, query: str
) -> SemanticQuery | None:
    """The question embedded when ``embedder``'s generation is the active one; None (recall
    lexical only) when there is no embedder or its generation is not active yet (being built
    by the embedding follower, or another is active). Only the active generation is answered
    with, so every process reads the same vectors. One short question costs the local default
    tens of milliseconds of CPU (multilingual-e5-small; WordLlama well under one); a remote
    embedder should embed before the connection is taken (:func:`embed_question`)."""
    if embedder is None:
        return None
    active = await embedding_store.active(conn)
    if active is None or active.name != EmbeddingGeneration.of(embedder.model).name:
        return None
    return await embed_question(embedder, query)


async def _messages_in_scope(
    conn: asyncpg.Connection,
    ids: Sequence[MessageId],
    tenant: str,
    principal: str,
    role_names: list[str],
    project: str | None,
) -> list[asyncpg.Record]:
    """The indexed rows of ``ids`` the question's scope allows (:data:`_IN_SCOPE`)."""
    rows: list[asyncpg.Record] = await conn.fetch(
        _IN_SCOPE, tenant, principal, [e for e, _ in ids], [o for _, o in ids], role_names, project
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
    kept: list[tuple[MessageId, float]] = []
    rows: list[asyncpg.Record] = []
    for start in range(0, len(similar.hits), CANDIDATES):
        step = [
            (message_of_item(hit.item_id), hit.score)
            for hit in similar.hits[start : start + CANDIDATES]
        ]
        found = await _messages_in_scope(
            conn, [m for m, _ in step], tenant, principal, role_names, project
        )
        held = {(r["episode_id"], r["message_ordinal"]) for r in found}
        kept += [(m, score) for m, score in step if m in held]
        rows += found
        if len(kept) >= CANDIDATES:
            break
    return kept[:CANDIDATES], rows


async def recall(
    conn: asyncpg.Connection,
    *,
    tenant: str,
    principal: str,
    query: str,
    project: str | None = None,
    roles: Sequence[Role] = OWN_WORDS,
    limit: int = 20,
    cursor: str | None = None,
    semantic: SemanticQuery | None = None,
    asked_at: datetime | None = None,
    foreign_lexical_weight: float | None = None,
) -> RecallResults:
    """One page of what answers ``query`` for the principal: beliefs, then messages of
    ``roles``, each best first (see the module's docstring). :class:`UnsearchableQuery` for a
    query with nothing to search for or text refused by :func:`check_recall_query`,
    :class:`InvalidCursor` for a cursor recall did not issue, ``ValueError`` for a limit out of
    range or no roles. ``semantic``: the question embedded (:func:`semantic_query`), whose
    nearest messages join the fusion; None: lexical only. ``asked_at``: when the question is
    asked (default: now), which relative times in it ("last May", "two weeks ago") are read
    against (:mod:`engram.projections.reads.when`); the messages said in a period it names come first,
    and the words that named it are not matched (no message holds "2023"). A question that is
    only a date ("May 2023") is answered by the messages said then, in the order said, with or
    without the semantic list. A question with no word to match (only stop words) is answered
    by the semantic list alone; without one it is :class:`UnsearchableQuery`. A question in
    another language than the index's (:func:`engram.projections.messages.read_spelling`), asked with
    the semantic list, weighs its lexical list :data:`FOREIGN_LEXICAL_WEIGHT` against it
    (``foreign_lexical_weight`` overrides it: the evaluation's comparisons)."""
    if not 1 <= limit <= MAX_LIMIT:
        raise ValueError(f"limit must be 1..{MAX_LIMIT}, not {limit}")
    if not roles:
        raise ValueError("roles must name at least one role")
    query = check_recall_query(query)
    after = decode_score_cursor(CURSOR_KIND, cursor) if cursor is not None else None
    role_names = sorted({Role(r).value for r in roles})
    timed = periods(query, asked_at or datetime.now(UTC))
    spelling = await asyncio.to_thread(read_spelling, timed.words)  # loads a word list once

    stats = await question_statistics(
        conn,
        tenant=tenant,
        principal=principal,
        words=question_words(timed.words, principal),
        roles=role_names,
        project=project,
        spelling=spelling,
    )
    idf = stats.idf
    # A question that is only a date ("May 2023"): answered by the messages said then, not by
    # the meaning of a date's words.
    only_time = bool(timed.periods) and not stats.terms
    if only_time:
        semantic = None
    belief_hits = await _answering_beliefs(
        conn, tenant, principal, timed.words, project, idf, semantic is not None or only_time
    )
    if only_time:
        lexical_rows = await _said_during(
            conn, tenant, principal, timed.periods, role_names, project
        )
    else:
        lexical_rows = (
            await best_messages(
                conn,
                stats,
                tenant=tenant,
                principal=principal,
                roles=role_names,
                project=project,
                limit=CANDIDATES,
            )
        ).rows
    near: list[tuple[MessageId, float]] = []
    near_rows: list[asyncpg.Record] = []
    if semantic is not None:
        near, near_rows = await semantic_messages(
            conn,
            semantic,
            tenant=tenant,
            principal=principal,
            role_names=role_names,
            project=project,
        )
    rows = {(r["episode_id"], r["message_ordinal"]): r for r in (*near_rows, *lexical_rows)}
    lexical = [((r["episode_id"], r["message_ordinal"]), r["score"]) for r in lexical_rows]
    lexical_rank = {} if only_time else ranks([m for m, _ in lexical])
    semantic_rank = ranks([m for m, _ in near])
    weight = semantic.weight if semantic is not None else 0.0
    if semantic is not None and spelling.language != INDEX_LANGUAGE:
        # A question in another language than the index's: its words rarely are the messages'
        # words, and meaning carries it (the lexical list counts FOREIGN_LEXICAL_WEIGHT).
        weight /= (
            FOREIGN_LEXICAL_WEIGHT
            if foreign_lexical_weight is None
            else max(foreign_lexical_weight, 1e-6)
        )
    timely = _said_in(rows, timed.periods)
    sessions = {m: (r["project"], r["session"]) for m, r in rows.items()}
    messages = rank_messages(
        lexical, near, semantic_weight=weight, in_period=timely, session_of=sessions
    )
    quoted = [(e.episode_id, e.message_ordinal) for b in belief_hits for e in b.evidence]
    in_scope = await _messages_in_scope(conn, quoted, tenant, principal, role_names, project)
    belief_hits = supported(
        belief_hits,
        [m for m, _ in messages[:SUPPORT_MESSAGES]],
        {(r["episode_id"], r["message_ordinal"]) for r in in_scope},
    )
    quoted_rank = ranks(
        [(e.episode_id, e.message_ordinal) for belief in belief_hits for e in belief.evidence]
    )

    belief_lexical = ranks([b.belief_id for b in belief_hits])
    ranked: list[_Ranked] = []
    by_id = {b.belief_id: b for b in belief_hits}
    for belief_id, fused in fuse([[b.belief_id for b in belief_hits]]):
        belief_hit = RecalledBelief(
            fused=fused, lexical_rank=belief_lexical.get(belief_id), belief=by_id[belief_id]
        )
        ranked.append(_Ranked(1.0 + fused, belief_id, belief_hit))
    for message, fused in messages:
        row = rows[message]
        role = Role(row["role"])
        hit = RecalledMessage(
            fused=fused,
            lexical_rank=lexical_rank.get(message),
            quoted_rank=quoted_rank.get(message),
            semantic_rank=semantic_rank.get(message),
            event_id=row["episode_id"],
            message_ordinal=row["message_ordinal"],
            role=role,
            own_words=role in OWN_WORDS,
            author=row["author"],
            project=row["project"],
            session=row["session"],
            occurred_at=row["occurred_at"],
            partition=row["source_partition"],
            offset=row["source_offset"],
            content=row["content"],
        )
        ranked.append(_Ranked(fused, message_uuid(*message), hit))

    ranked.sort(key=lambda r: (-r.sort_key, r.key))
    if after is not None:
        key, last = after
        ranked = [r for r in ranked if r.sort_key < key or (r.sort_key == key and r.key > last)]
    page = ranked[:limit]
    more = len(ranked) > limit
    next_cursor = encode_cursor(CURSOR_KIND, page[-1].sort_key, page[-1].key) if more else None
    projects = sorted({p for p in map(_project, page) if p is not None})
    reflects = [await freshness(conn, tenant=tenant, project=p) for p in projects]
    return RecallResults(hits=[r.hit for r in page], next_cursor=next_cursor, reflects=reflects)


async def _answering_beliefs(
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


async def _said_during(
    conn: asyncpg.Connection,
    tenant: str,
    principal: str,
    named: Sequence[Period],
    role_names: list[str],
    project: str | None,
) -> list[asyncpg.Record]:
    """The messages said in the periods a question of only a date names, in the order said
    (the first :data:`CANDIDATES` of each period), as the list its words would have given."""
    found: dict[MessageId, asyncpg.Record] = {}
    for period in named:
        for row in await conn.fetch(
            _DURING, tenant, principal, role_names, project, period.start, period.end, CANDIDATES
        ):
            found.setdefault((row["episode_id"], row["message_ordinal"]), row)
    return list(found.values())[:CANDIDATES]


def _said_in(rows: Mapping[MessageId, asyncpg.Record], named: Sequence[Period]) -> list[MessageId]:
    """The candidates said in one of the periods a question names."""
    return [m for m, row in rows.items() if any(p.holds(row["occurred_at"]) for p in named)]


def _project(ranked: _Ranked) -> str | None:
    """The project a hit comes from: a message's own; a belief's if it is scoped to one project
    (``project:<name>``), else None (a belief scoped wider than one project)."""
    hit = ranked.hit
    if isinstance(hit, RecalledMessage):
        return hit.project
    scope = hit.belief.scope
    return scope.removeprefix("project:") if scope.startswith("project:") else None
