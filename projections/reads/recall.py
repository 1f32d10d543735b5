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
  messages said in a period the question names fused in front;
- then the first of them read again with the question (:func:`second_stage`,
  :mod:`engram.projections.reads.rerank`): a message that says a time for a "when" question, a
  number for a "how many", a place for a "where" moves up, one that asks a question down.

**Pages.** The answer is ranked whole — at most :data:`CANDIDATES` of each list — and served in
pages by keyset (:mod:`engram.projections.reads.recall_page`).

**Stages.** :func:`recall` reads the request (:func:`read_request`); its first stage
(:func:`first_stage`) reads the question's words, finds the beliefs they match
(:mod:`engram.projections.reads.recall_beliefs`), gathers the candidate lists
(:mod:`engram.projections.reads.recall_lists`) and ranks the messages (:func:`rank_messages`);
its second stage (:func:`second_stage`) reads the first candidates again; then it keeps the
beliefs that ranking supports and serves a page. Each stage is a function of its own.
"""

from __future__ import annotations

import asyncio
import unicodedata
import uuid
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from functools import partial

import asyncpg

from engram.infra.errors import EngramFailure
from engram.projections.messages import (
    INDEX_LANGUAGE,
    Embedder,
    EmbeddingGeneration,
    Spelling,
    Statistics,
    embedding_store,
    glosses,
    question_statistics,
    read_spelling,
)
from engram.projections.reads.cursor import InvalidCursor, decode_score_cursor
from engram.projections.reads.freshness import freshness
from engram.projections.reads.fusion import combine, fuse, ranks, with_neighbours
from engram.projections.reads.recall_beliefs import (
    MIN_MATCHED_TERMS,
    SUPPORT_MESSAGES,
    answering,
    answering_beliefs,
    quoted,
    supported,
    supported_beliefs,
)
from engram.projections.reads.recall_lists import (
    CANDIDATES,
    SEMANTIC_CANDIDATES,
    SEMANTIC_WEIGHT,
    Candidates,
    MessageId,
    Scope,
    SemanticQuery,
    candidate_lists,
    said_in,
    semantic_messages,
)
from engram.projections.reads.recall_page import (
    CURSOR_KIND,
    OWN_WORDS,
    belief_hits,
    message_hits,
    message_uuid,
    page_of,
    reflects,
)
from engram.projections.reads.rerank import TOP, asks_for, rerank
from engram.projections.reads.search import (
    MAX_QUERY_CHARS,
    UnsearchableQuery,
    check_query,
    question_words,
)
from engram.projections.reads.time_words import english_time
from engram.projections.reads.when import Timed, periods
from engram.schemas.api import BeliefView, RecallResults
from engram.schemas.common import Role
from engram.watermarks.waiting import poll_until

__all__ = [
    "CANDIDATES",
    "MAX_QUERY_CHARS",
    "MIN_MATCHED_TERMS",
    "OWN_WORDS",
    "SEMANTIC_CANDIDATES",
    "SEMANTIC_WEIGHT",
    "SUPPORT_MESSAGES",
    "IndexBehind",
    "InvalidCursor",
    "MessageId",
    "SemanticQuery",
    "UnsearchableQuery",
    "answering",
    "message_uuid",
    "recall",
    "semantic_messages",
    "supported",
]

MAX_LIMIT = 100
_ALLOWED_CONTROLS = frozenset("\t\n\r")

SESSION_WEIGHT = 0.3
"""How much the best other hit of a message's session adds to its combined score
(:func:`fusion.with_neighbours`): a session is scored by its best-matching message, as a prior
for the others. Chosen on the dev split (docs/retrieval.md)."""

FOREIGN_LEXICAL_WEIGHT = 1.0
"""The lexical list's weight, against the semantic list's, for a question in another language
than the index's (English stems), applied as the semantic weight divided by it. Its words are
matched with their English words beside them (:func:`engram.projections.messages.glossary.glosses`),
so its lexical list counts as an English question's; without the glossary, 0.25 was best (its
words matched only by accident: a name, a cognate). Chosen on translated dev questions
(docs/retrieval.md)."""

PERIOD_WEIGHT = 1.0
"""The weight of the list of candidates said in a period the question names: as much as the
others', so a message of that period outranks one of another that words and meaning rank
alike."""


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


def semantic_weight(
    semantic: SemanticQuery | None, language: str, foreign_lexical_weight: float | None = None
) -> float:
    """The semantic list's weight against the lexical list's for a question read as
    ``language`` (0 without the semantic list): the query's own weight; for a question in
    another language than the index's, whose words rarely are the messages' words and whose
    meaning carries it, divided by :data:`FOREIGN_LEXICAL_WEIGHT` (or by
    ``foreign_lexical_weight``: the evaluation's comparisons)."""
    if semantic is None:
        return 0.0
    if language == INDEX_LANGUAGE:
        return semantic.weight
    lexical = (
        FOREIGN_LEXICAL_WEIGHT
        if foreign_lexical_weight is None
        else max(foreign_lexical_weight, 1e-6)
    )
    return semantic.weight / lexical


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


@dataclass(frozen=True, slots=True)
class Request:
    """A recall request, checked: the question, the page it continues (the cursor's sort key
    and id), the roles' names, and the periods the question names with the words left."""

    query: str
    after: tuple[float, uuid.UUID] | None
    role_names: list[str]
    timed: Timed


def read_request(
    query: str,
    *,
    roles: Sequence[Role],
    limit: int,
    cursor: str | None,
    asked_at: datetime | None,
) -> Request:
    """The request checked (``ValueError`` for a limit out of range or no roles,
    :class:`UnsearchableQuery` for text :func:`check_recall_query` refuses,
    :class:`InvalidCursor` for a cursor recall did not issue) and its time read
    (:func:`engram.projections.reads.when.periods`, as of ``asked_at`` or now; a Portuguese or
    Spanish question's dates first put in English words, :func:`english_time`, whose first call
    loads word lists: call it off the event loop)."""
    if not 1 <= limit <= MAX_LIMIT:
        raise ValueError(f"limit must be 1..{MAX_LIMIT}, not {limit}")
    if not roles:
        raise ValueError("roles must name at least one role")
    query = check_recall_query(query)
    after = decode_score_cursor(CURSOR_KIND, cursor) if cursor is not None else None
    role_names = sorted({Role(r).value for r in roles})
    timed = periods(english_time(query), asked_at or datetime.now(UTC))
    return Request(query, after, role_names, timed)


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
    reread: bool = True,
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
    another language than the index's (:func:`engram.projections.messages.read_spelling`) has its
    dates read in English words (:func:`engram.projections.reads.time_words.english_time`) and
    its words' English words added to its terms (:func:`engram.projections.messages.glosses`,
    Portuguese and Spanish); asked with the semantic list, it weighs its lexical list
    :data:`FOREIGN_LEXICAL_WEIGHT` against it (``foreign_lexical_weight`` overrides it: the
    evaluation's comparisons). ``reread``: the
    second stage (:func:`second_stage`) puts the first candidates in order; False keeps the
    first stage's order (the evaluation's and the bench's baseline).

    The stages, in order: read the request (:func:`read_request`); the first stage
    (:func:`first_stage`: the question's words, the beliefs they find, the candidate lists and
    their one ranking); the second stage (:func:`second_stage`: the first candidates read again
    with the question); the beliefs that ranking supports (:func:`supported_beliefs`); the page
    (:mod:`engram.projections.reads.recall_page`)."""
    request = await asyncio.to_thread(
        partial(read_request, query, roles=roles, limit=limit, cursor=cursor, asked_at=asked_at)
    )
    scope = Scope(tenant, principal, request.role_names, project)
    first = await first_stage(
        conn, request, scope, semantic=semantic, foreign_lexical_weight=foreign_lexical_weight
    )
    messages = second_stage(first, request.query) if reread else first.messages
    beliefs = await supported_beliefs(conn, first.beliefs, messages, scope)
    ranked = [
        *belief_hits(beliefs),
        *message_hits(messages, first.candidates, ranks(quoted(beliefs))),
    ]
    page, next_cursor = page_of(ranked, request.after, limit)
    return RecallResults(
        hits=[r.hit for r in page],
        next_cursor=next_cursor,
        reflects=await reflects(conn, tenant, page),
    )


@dataclass(frozen=True)
class FirstStage:
    """What the first stage found for a question: its terms' statistics, the beliefs its words
    match (before :func:`supported` judges them), the candidate lists, and the messages' one
    ranking (:func:`rank_messages`), best first."""

    stats: Statistics
    beliefs: list[BeliefView]
    candidates: Candidates
    messages: list[tuple[MessageId, float]]


def _read_words(text: str, principal: str) -> tuple[Spelling, list[str]]:
    """The question's spelling (its language, the words to correct) and its words; another
    language's words with their English words beside them (a glossary), the index's."""
    spelling = read_spelling(text)
    words = question_words(text, principal)
    return spelling, words + glosses(words, spelling.language)


async def first_stage(
    conn: asyncpg.Connection,
    request: Request,
    scope: Scope,
    *,
    semantic: SemanticQuery | None,
    foreign_lexical_weight: float | None = None,
) -> FirstStage:
    """The question's words read (:func:`engram.projections.messages.question_statistics`,
    spelling included), the beliefs they find (:func:`answering_beliefs`), the candidate lists
    (:func:`candidate_lists`) and their one ranking (:func:`rank_messages`: combined by score,
    the session prior, the period in front)."""
    timed = request.timed
    # word lists and glossaries load on first use: read off the event loop, in one hop
    spelling, words = await asyncio.to_thread(_read_words, timed.words, scope.principal)
    stats = await question_statistics(
        conn,
        tenant=scope.tenant,
        principal=scope.principal,
        words=words,
        roles=scope.role_names,
        project=scope.project,
        spelling=spelling,
    )
    # A question that is only a date ("May 2023"): answered by the messages said then, not by
    # the meaning of a date's words.
    only_time = bool(timed.periods) and not stats.terms
    if only_time:
        semantic = None
    beliefs = await answering_beliefs(
        conn,
        scope.tenant,
        scope.principal,
        timed.words,
        scope.project,
        stats.idf,
        semantic is not None or only_time,
    )
    candidates = await candidate_lists(
        conn, stats, scope, named=timed.periods, semantic=semantic, only_time=only_time
    )
    messages = rank_messages(
        candidates.lexical,
        candidates.semantic,
        semantic_weight=semantic_weight(semantic, spelling.language, foreign_lexical_weight),
        in_period=said_in(candidates.rows, timed.periods),
        session_of=candidates.sessions,
    )
    return FirstStage(stats, beliefs, candidates, messages)


def second_stage(first: FirstStage, question: str) -> list[tuple[MessageId, float]]:
    """The first stage's first :data:`engram.projections.reads.rerank.TOP` messages read again
    with the question (:func:`engram.projections.reads.rerank.rerank`: the answer's type, and
    whether a message asks rather than tells), the rest after them as they were; each message's
    fused score is then ``1 / (60 + its place)``. A question that is only a date keeps the
    order its messages were said in. Pure: it reads the candidates' rows the first stage
    fetched."""
    messages = first.messages
    if first.candidates.only_time or len(messages) < 2:
        return messages
    contents = {m: first.candidates.rows[m]["content"] for m, _ in messages[:TOP]}
    return fuse([rerank([m for m, _ in messages], contents, asks_for(question))])
