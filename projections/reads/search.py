"""Full-text search over one principal's current beliefs, best first, with their evidence.

What is searched is ``belief.search_vector`` (migrations 0012, 0020): the statement, object,
facet, subject and relation, weighted in that order, in the ``engram_english`` configuration —
PostgreSQL's english stemmer and stop words behind ``unaccent``, so "lives" finds "live" and
"cafe" finds "café". A query is read in one of two modes (:class:`engram.schemas.api.SearchMode`):

- ``any`` (the default): a question in plain words. Each word is a term of its own; a belief
  matching any term is a hit. Stop words drop out in the configuration, and the principal's own
  name (the words of its identifier) and question words that say nothing about the answer
  (:data:`NO_WEIGHT`) are dropped before; job words ("job", "work", "career", …) also look for
  the vocabulary's ``role`` (:data:`SYNONYMS`). Hits rank first by how many distinct terms they
  match (``matched_terms``), then by ``score``.
- ``all``: web-search syntax read by ``websearch_to_tsquery`` — quoted phrases, ``or``,
  ``-word`` — where every word must match. It accepts any text without a syntax error.

Either way a query with nothing searchable left (only stop words or punctuation) is
:class:`UnsearchableQuery`, so a caller hears why nothing can match.

**Ranking.** ``score = relevance * belief * support * recency`` where

- ``relevance`` = ``ts_rank_cd(search_vector, query, 32)``: cover density of the matched words,
  scaled to 0-1 (``rank / (rank + 1)``); it gates everything, as only matches are returned;
- ``belief`` = ``0.4 + 0.6 * confidence``: a certain belief ranks up to 2.5 times a doubtful one;
- ``support`` = ``1 + 0.25 * ln(corroboration)``: each doubling of independent evidence adds
  about a sixth, without letting a much-repeated belief drown a better match;
- ``recency`` = ``0.5 + 0.5 * 2^(-age / 90 days)``, where ``age`` is how long before the newest
  match this belief was last reinforced (or learned, if later): relative to the matches, not
  the clock, so the same memory and query rank the same way whenever they are asked.

In mode ``any`` the sort key is ``matched_terms + score / (1 + score)``: the fraction is below
one, so a belief matching more terms always ranks above one matching fewer, and among equals
the score decides. Ties go to the lower belief id. Pages are keyset pages: the cursor holds the
last hit's sort key and id, so while the memory stands still the pages walk every hit once; a
belief that forms between two pages shows up only if it ranks below the cursor (and, as the
newest match, it moves every recency a little).

Scope is the caller's: tenant and principal in SQL, current beliefs only (active, provisional),
and with ``project`` the same rule as the beliefs list (:data:`engram.projections.reads.queries.IN_PROJECT`).
"""

from __future__ import annotations

import re
import uuid
from dataclasses import dataclass
from datetime import UTC, datetime

import asyncpg

from engram.infra.errors import EngramFailure
from engram.projections.reads.cursor import InvalidCursor, decode_score_cursor, encode_cursor
from engram.projections.reads.decay_in_force import decay_in_force
from engram.projections.reads.queries import IN_PROJECT, belief_view
from engram.schemas.api import SearchHit, SearchMode, SearchResults

RECENCY_HALF_LIFE_DAYS = 90.0
MAX_QUERY_CHARS = 256
"""Longer than any question about a person needs; a longer one is refused, not truncated."""
MAX_LIMIT = 100
CURSOR_KINDS = {SearchMode.ALL: "search", SearchMode.ANY: "search-any"}
"""A cursor names its mode: the two order by different keys, so one is refused by the other."""
CONFIG = "engram_english"
"""The text search configuration of migration 0020 (english behind unaccent)."""

NO_WEIGHT = frozenset(
    {
        "whose", "would", "could", "might", "ever", "kind", "sort", "type", "tell", "know",
        "think", "likely", "recently", "many", "much", "often", "someone", "something",
        "thing", "things",
    }
)  # fmt: skip
"""Words a question is made of that the english stop words keep but that say nothing about the
answer ("what kind of …", "would … likely …"); in mode ``any`` they carry no weight. The
english configuration already drops what, which, who, when, where, why, how, did, does, is."""

SYNONYMS: dict[str, tuple[str, ...]] = {
    word: ("role",)
    for word in ("job", "jobs", "work", "works", "occupation", "profession", "career")
}
"""Question words for what the vocabulary stores under another name: a job is a ``has_role``
belief (its relation is searched as "has role"); the word itself is searched too."""

_WORD = re.compile(r"[^\W_]+")

__all__ = ["InvalidCursor"]  # re-exported: search's callers catch it from here

_ALL_QUERY = "SELECT websearch_to_tsquery('engram_english', $3::text) AS q"
_ANY_TERMS = """terms AS (
    SELECT DISTINCT plainto_tsquery('engram_english', w) AS t FROM unnest($3::text[]) AS w
    WHERE numnode(plainto_tsquery('engram_english', w)) > 0
), """
_ANY_QUERY = "SELECT string_agg('(' || t::text || ')', ' | ')::tsquery AS q FROM terms"
_ANY_MATCHED = "(SELECT count(*) FROM terms WHERE b.search_vector @@ terms.t)::int"

_SEARCH = """
WITH {terms}query AS ({query}), matched AS (
    SELECT b.belief_id,
           ts_rank_cd(b.search_vector, query.q, 32)::float8 AS relevance,
           {matched_terms} AS matched_terms,
           b.confidence::float8 AS confidence,
           b.corroboration::float8 AS corroboration,
           greatest(b.last_reinforced_at, b.known_from) AS seen
    FROM belief b, query
    WHERE b.tenant = $1 AND b.principal = $2 AND b.status IN ('active', 'provisional')
      AND b.search_vector @@ query.q AND {in_project}
), scored AS (
    SELECT belief_id, relevance, matched_terms,
           relevance
           * (0.4 + 0.6 * confidence)
           * (1 + 0.25 * ln(corroboration))
           * (0.5 + 0.5 * power(0.5, extract(epoch FROM max(seen) OVER () - seen)
                                     / (86400.0 * $4::float8)))
           AS score
    FROM matched
), keyed AS (
    SELECT belief_id, relevance, matched_terms, score, {sort_key} AS sort_key FROM scored
), page AS (
    SELECT belief_id, relevance, matched_terms, score, sort_key FROM keyed
    WHERE $5::float8 IS NULL OR sort_key < $5 OR (sort_key = $5 AND belief_id > $6::uuid)
    ORDER BY sort_key DESC, belief_id
    LIMIT $7
)
SELECT page.score, page.relevance, page.matched_terms, page.sort_key, b.*,
       coalesce(se.canonical_name, b.subject_key) AS subject_name,
       coalesce(oe.canonical_name, b.object_text) AS object_name,
       coalesce(jsonb_agg(jsonb_build_object(
           'episode_id', e.episode_id, 'message_ordinal', e.message_ordinal, 'role', e.role,
           'quote', e.quote, 'span_start', e.span_start, 'span_end', e.span_end,
           'extractor', e.extractor, 'source_partition', e.source_partition,
           'source_offset', e.source_offset, 'occurred_at', e.occurred_at)
         ORDER BY e.occurred_at, e.source_offset, e.message_ordinal)
         FILTER (WHERE e.evidence_id IS NOT NULL), '[]') AS evidence_json
FROM page
JOIN belief b ON b.belief_id = page.belief_id
LEFT JOIN entity se ON se.entity_id = b.subject_entity_id
LEFT JOIN entity oe ON oe.entity_id = b.object_entity_id
LEFT JOIN evidence e ON e.belief_id = b.belief_id
GROUP BY page.score, page.relevance, page.matched_terms, page.sort_key, b.belief_id,
         se.canonical_name, oe.canonical_name
ORDER BY page.sort_key DESC, b.belief_id
"""


def search_sql(mode: SearchMode, in_project: str) -> str:
    """The statement for ``mode``: ``$3`` is the query text (``all``) or its terms (``any``)."""
    if mode is SearchMode.ALL:
        return _SEARCH.format(
            query=_ALL_QUERY,
            terms="",
            matched_terms="NULL::int",
            sort_key="score",
            in_project=in_project,
        )
    return _SEARCH.format(
        query=_ANY_QUERY,
        terms=_ANY_TERMS,
        matched_terms=_ANY_MATCHED,
        sort_key="matched_terms + score / (1 + score)",
        in_project=in_project,
    )


def question_words(query: str, principal: str) -> list[str]:
    """The words of ``query`` searched in mode ``any``, in order, each once: without the
    principal's own name (the words of its identifier) and :data:`NO_WEIGHT`, with
    :data:`SYNONYMS` added. Stop words are left to the configuration, which knows them."""
    name = set(_WORD.findall(principal.casefold()))
    words: list[str] = []
    for word in _WORD.findall(query.casefold()):
        if word in name or word in NO_WEIGHT:
            continue
        for term in (word, *SYNONYMS.get(word, ())):
            if term not in words:
                words.append(term)
    return words


class UnsearchableQuery(EngramFailure, ValueError):
    """The query has no word left to search for once stop words and punctuation are dropped."""

    code = "unsearchable_query"


@dataclass(frozen=True)
class After:
    """Where the previous page ended: its last hit's sort key and belief id, in its mode."""

    mode: SearchMode
    sort_key: float
    belief_id: uuid.UUID

    def encode(self) -> str:
        return encode_cursor(CURSOR_KINDS[self.mode], self.sort_key, self.belief_id)

    @classmethod
    def decode(cls, mode: SearchMode, cursor: str) -> After:
        """:class:`InvalidCursor` for a cursor not issued by search in ``mode`` (another list's,
        or the other mode's, included)."""
        return cls(mode, *decode_score_cursor(CURSOR_KINDS[mode], cursor))


def check_query(query: str) -> str:
    """The query as searched (stripped), or :class:`UnsearchableQuery` naming what is wrong:
    blank, too long, or text PostgreSQL cannot hold (a NUL, an unpaired surrogate)."""
    stripped = query.strip()
    if not stripped:
        raise UnsearchableQuery("q is blank; say what to search for")
    if len(stripped) > MAX_QUERY_CHARS:
        raise UnsearchableQuery(f"q is over {MAX_QUERY_CHARS} characters; search for less")
    try:
        stripped.encode("utf-8")
    except UnicodeEncodeError:
        raise UnsearchableQuery("q is not valid Unicode text") from None
    if "\x00" in stripped:
        raise UnsearchableQuery("q contains a NUL character")
    return stripped


async def searchable(
    conn: asyncpg.Connection | asyncpg.Pool, query: str | list[str], mode: SearchMode
) -> bool:
    """Whether ``query`` (``all``: the text; ``any``: its words) leaves any word to search for
    (``websearch_to_tsquery`` never fails, but drops stop words and punctuation, and may drop
    everything)."""
    if mode is SearchMode.ALL:
        sql = "SELECT numnode(websearch_to_tsquery('engram_english', $1::text)) > 0"
    else:
        sql = (
            "SELECT coalesce(bool_or(numnode(plainto_tsquery('engram_english', w)) > 0), false)"
            " FROM unnest($1::text[]) AS w"
        )
    return bool(await conn.fetchval(sql, query))


async def search_beliefs(
    conn: asyncpg.Connection,
    *,
    tenant: str,
    principal: str,
    query: str,
    mode: SearchMode = SearchMode.ANY,
    project: str | None = None,
    limit: int = 20,
    cursor: str | None = None,
) -> SearchResults:
    """One page of the principal's current beliefs that match ``query`` read in ``mode``, best
    first (see the module's docstring for the ranking); :class:`UnsearchableQuery` when nothing
    in ``query`` can match, :class:`InvalidCursor` for a cursor that was not issued here."""
    if not 1 <= limit <= MAX_LIMIT:
        raise ValueError(f"limit must be 1..{MAX_LIMIT}, not {limit}")
    query = check_query(query)
    after = After.decode(mode, cursor) if cursor is not None else None
    searched: str | list[str] = (
        query if mode is SearchMode.ALL else question_words(query, principal)
    )
    args: list[object] = [
        tenant,
        principal,
        searched,
        RECENCY_HALF_LIFE_DAYS,
        after.sort_key if after else None,
        after.belief_id if after else None,
        limit + 1,
    ]
    in_project = "true"
    if project is not None:
        args.append(f"project:{project}")
        in_project = IN_PROJECT.format(scope=f"${len(args)}")
    rows = await conn.fetch(search_sql(mode, in_project), *args)
    if not rows and not await searchable(conn, searched, mode):  # only a miss asks why
        raise UnsearchableQuery(
            "q has no words to search for (only stop words, punctuation, question words or "
            "the principal's own name); use content words"
        )
    decay, now = await decay_in_force(conn), datetime.now(UTC)
    hits = [
        SearchHit(
            score=row["score"],
            relevance=row["relevance"],
            matched_terms=row["matched_terms"],
            belief=belief_view(row, decay, now),
        )
        for row in rows[:limit]
    ]
    more = len(rows) > limit
    last = rows[limit - 1] if more else None
    next_cursor = (
        After(mode, last["sort_key"], last["belief_id"]).encode() if last is not None else None
    )
    return SearchResults(hits=hits, next_cursor=next_cursor)
