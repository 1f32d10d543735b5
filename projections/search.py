"""Full-text search over one principal's current beliefs, best first, with their evidence.

What is searched is ``belief.search_vector`` (migration 0012): the statement, object, facet,
subject and relation, weighted in that order, in PostgreSQL's ``english`` configuration. The
query is read with ``websearch_to_tsquery`` — quoted phrases, ``or``, ``-word`` — which accepts
any text without a syntax error; a query with nothing searchable left (only stop words or
punctuation) is :class:`UnsearchableQuery`, so a caller hears why nothing can match.

**Ranking.** ``score = relevance * belief * support * recency`` where

- ``relevance`` = ``ts_rank_cd(search_vector, query, 32)``: cover density of the matched words,
  scaled to 0-1 (``rank / (rank + 1)``); it gates everything, as only matches are returned;
- ``belief`` = ``0.4 + 0.6 * confidence``: a certain belief ranks up to 2.5 times a doubtful one;
- ``support`` = ``1 + 0.25 * ln(corroboration)``: each doubling of independent evidence adds
  about a sixth, without letting a much-repeated belief drown a better match;
- ``recency`` = ``0.5 + 0.5 * 2^(-age / 90 days)``, where ``age`` is how long before the newest
  match this belief was last reinforced (or learned, if later): relative to the matches, not
  the clock, so the same memory and query rank the same way whenever they are asked.

Ties go to the lower belief id. Pages are keyset pages: the cursor holds the last hit's score
and id, so while the memory stands still the pages walk every hit once; a belief that forms
between two pages shows up only if it ranks below the cursor (and, as the newest match, it
moves every recency a little).

Scope is the caller's: tenant and principal in SQL, current beliefs only (active, provisional),
and with ``project`` the same rule as the beliefs list (:data:`projections.queries.IN_PROJECT`).
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import UTC, datetime

import asyncpg

from infra.errors import EngramFailure
from projections.cursor import InvalidCursor, decode_score_cursor, encode_cursor
from projections.decay_in_force import decay_in_force
from projections.queries import IN_PROJECT, belief_view
from schemas.api import SearchHit, SearchResults

RECENCY_HALF_LIFE_DAYS = 90.0
MAX_QUERY_CHARS = 256
"""Longer than any question about a person needs; a longer one is refused, not truncated."""
MAX_LIMIT = 100
CURSOR_KIND = "search"

__all__ = ["InvalidCursor"]  # re-exported: search's callers catch it from here

_SEARCH = """
WITH matched AS (
    SELECT b.belief_id,
           ts_rank_cd(b.search_vector, websearch_to_tsquery('english', $3), 32)::float8
               AS relevance,
           b.confidence::float8 AS confidence,
           b.corroboration::float8 AS corroboration,
           greatest(b.last_reinforced_at, b.known_from) AS seen
    FROM belief b
    WHERE b.tenant = $1 AND b.principal = $2 AND b.status IN ('active', 'provisional')
      AND b.search_vector @@ websearch_to_tsquery('english', $3) AND {in_project}
), scored AS (
    SELECT belief_id, relevance,
           relevance
           * (0.4 + 0.6 * confidence)
           * (1 + 0.25 * ln(corroboration))
           * (0.5 + 0.5 * power(0.5, extract(epoch FROM max(seen) OVER () - seen)
                                     / (86400.0 * $4::float8)))
           AS score
    FROM matched
), page AS (
    SELECT belief_id, relevance, score FROM scored
    WHERE $5::float8 IS NULL OR score < $5 OR (score = $5 AND belief_id > $6::uuid)
    ORDER BY score DESC, belief_id
    LIMIT $7
)
SELECT page.score, page.relevance, b.*,
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
GROUP BY page.score, page.relevance, b.belief_id, se.canonical_name, oe.canonical_name
ORDER BY page.score DESC, b.belief_id
"""


class UnsearchableQuery(EngramFailure, ValueError):
    """The query has no word left to search for once stop words and punctuation are dropped."""

    code = "unsearchable_query"


@dataclass(frozen=True)
class After:
    """Where the previous page ended: its last hit's score and belief id."""

    score: float
    belief_id: uuid.UUID

    def encode(self) -> str:
        return encode_cursor(CURSOR_KIND, self.score, self.belief_id)

    @classmethod
    def decode(cls, cursor: str) -> After:
        """:class:`InvalidCursor` for a cursor not issued by search (another list's included)."""
        return cls(*decode_score_cursor(CURSOR_KIND, cursor))


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


async def searchable(conn: asyncpg.Connection | asyncpg.Pool, query: str) -> bool:
    """Whether ``query`` leaves any word to search for (``websearch_to_tsquery`` never fails,
    but drops stop words and punctuation, and may drop everything)."""
    nodes = await conn.fetchval("SELECT numnode(websearch_to_tsquery('english', $1::text))", query)
    return bool(nodes)


async def search_beliefs(
    conn: asyncpg.Connection,
    *,
    tenant: str,
    principal: str,
    query: str,
    project: str | None = None,
    limit: int = 20,
    cursor: str | None = None,
) -> SearchResults:
    """One page of the principal's current beliefs that match ``query``, best first (see the
    module's docstring for the ranking); :class:`UnsearchableQuery` when nothing in ``query``
    can match, :class:`InvalidCursor` for a cursor that was not issued here."""
    if not 1 <= limit <= MAX_LIMIT:
        raise ValueError(f"limit must be 1..{MAX_LIMIT}, not {limit}")
    query = check_query(query)
    after = After.decode(cursor) if cursor is not None else None
    args: list[object] = [
        tenant,
        principal,
        query,
        RECENCY_HALF_LIFE_DAYS,
        after.score if after else None,
        after.belief_id if after else None,
        limit + 1,
    ]
    in_project = "true"
    if project is not None:
        args.append(f"project:{project}")
        in_project = IN_PROJECT.format(scope=f"${len(args)}")
    rows = await conn.fetch(_SEARCH.format(in_project=in_project), *args)
    if not rows and not await searchable(conn, query):  # only a miss pays for asking why
        raise UnsearchableQuery(
            "q has no words to search for (only stop words or punctuation); use content words"
        )
    decay, now = await decay_in_force(conn), datetime.now(UTC)
    hits = [
        SearchHit(
            score=row["score"], relevance=row["relevance"], belief=belief_view(row, decay, now)
        )
        for row in rows[:limit]
    ]
    more = len(rows) > limit
    last = hits[-1] if hits else None
    next_cursor = After(last.score, last.belief.belief_id).encode() if more and last else None
    return SearchResults(hits=hits, next_cursor=next_cursor)
