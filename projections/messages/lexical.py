"""The lexical list of messages: Okapi BM25's best over the principal's messages in scope, read
from postings, not from every message holding a common word.

Recall's lexical list (:mod:`engram.projections.reads.recall`) ranks the messages that hold any term of the
question by Okapi BM25 (:data:`BM25_K1`, :data:`BM25_B`; idf ``ln(1 + (N - df + 0.5) / (df +
0.5))``; a message's length is the number of its lexemes' occurrences, normalised by the
average over the principal's messages in scope). What it reads is kept by the indexer
(migration 0027), so a question costs what its terms' posting lists hold, not what the
principal's history holds:

- **The statistics** (``N``, each term's ``df``, the total length) are looked up in counts
  summed over the roles and project in scope, not counted over the messages.
- **The scores** come from the postings (``message_term``: one row per message and lexeme, with
  the lexeme's occurrences and the message's length), read from the index alone and summed per
  message; only the best ``limit`` messages' rows are read.
- **The ceiling on work.** A question of common words only would read a long posting list for
  each. One question reads at most :data:`MAX_SCORED` postings: terms are taken rarest first
  while their document frequencies fit (the rarest always); the commonest words left over count
  for nothing — a message holding only them is not a candidate, one holding a rarer term too is
  scored without them — and their weight is the smallest there is. ``exact`` says whether every
  term was read (the ranking is then the exhaustive one). At 100k messages every one of the
  bench's 100 questions fit (docs/benchmarks.md, "Recall at scale", has the trade-off).
"""

from __future__ import annotations

import math
from collections.abc import Sequence, Set
from dataclasses import dataclass

import asyncpg

from engram.projections.messages.spelling import Spelling

BM25_K1 = 1.2
BM25_B = 0.75
"""Okapi BM25's term-frequency saturation and length normalisation (the usual values)."""

INDEX_LANGUAGE = "en"
"""The language of the index's lexemes (``engram_english``, migration 0020)."""

MAX_SCORED = 40_000
"""The most postings one question reads (the summed document frequencies of its terms)."""

_STATISTICS = """
WITH lexemes AS (
    SELECT DISTINCT v.lexeme
    FROM unnest(to_tsvector('engram_english', array_to_string($3::text[], ' '))) AS v
), scope AS (
    SELECT coalesce(sum(messages), 0)::float8 AS n, coalesce(sum(length), 0)::float8 AS length
    FROM message_scope_stats
    WHERE tenant = $1 AND principal = $2 AND role = ANY($4::text[])
      AND ($5::text IS NULL OR project = $5)
)
SELECT l.lexeme, d.df, scope.n, scope.length
FROM lexemes l, scope, LATERAL (
    SELECT coalesce(sum(s.messages), 0)::float8 AS df FROM message_term_stats s
    WHERE s.tenant = $1 AND s.principal = $2 AND s.lexeme = l.lexeme
      AND s.role = ANY($4::text[]) AND ($5::text IS NULL OR s.project = $5)
) d
ORDER BY l.lexeme
"""
"""The question's terms (the ``engram_english`` lexemes of its words, ``$3``), each one's
document frequency, and the number and total length of the principal's messages in scope
(``$4``: the roles; ``$5``: the project or null), from migration 0027's counts."""

_RANKED = """
WITH scored AS (
    SELECT p.episode_id, p.message_ordinal, max(p.source_offset) AS source_offset,
           sum(w.idf * p.occurrences * ($7::float8 + 1)
               / (p.occurrences + $7 * (1 - $8::float8 + $8 * p.length / $10::float8)))
               AS score
    FROM unnest($3::text[], $9::float8[]) AS w(lexeme, idf)
    JOIN message_term p ON p.tenant = $1 AND p.principal = $2 AND p.lexeme = w.lexeme
    WHERE p.role = ANY($4::text[]) AND ($5::text IS NULL OR p.project = $5)
    GROUP BY p.episode_id, p.message_ordinal
    ORDER BY score DESC, source_offset DESC, p.episode_id, p.message_ordinal
    LIMIT $6
)
SELECT m.project, m.session, m.episode_id, m.message_ordinal, m.role, m.author, m.content,
       m.occurred_at, m.source_partition, m.source_offset, s.score
FROM scored s
JOIN message m ON m.tenant = $1 AND m.principal = $2
 AND m.episode_id = s.episode_id AND m.message_ordinal = s.message_ordinal
ORDER BY s.score DESC, s.source_offset DESC, s.episode_id, s.message_ordinal
"""
"""The ``$6`` best messages in scope (``$4``: the roles; ``$5``: the project or null) by BM25
over the terms read (``$3``, ``$9``: the terms and their idf; ``$7``, ``$8``: k1 and b;
``$10``: the average length in scope), summed from their postings. Ties go to the later
message in the log."""


@dataclass(frozen=True, slots=True)
class Term:
    """A term of the question: its lexeme, and how many of the principal's messages in scope
    hold it."""

    lexeme: str
    df: float


@dataclass(frozen=True, slots=True)
class Statistics:
    """What BM25 needs of the principal's messages in scope, for one question."""

    terms: tuple[Term, ...]
    messages: float
    length: float

    @property
    def idf(self) -> dict[str, float]:
        """Each term's inverse document frequency, in lexeme order."""
        return {t.lexeme: idf(self.messages, t.df) for t in self.terms}

    @property
    def average_length(self) -> float:
        """BM25's average document length (at least 1, so an empty scope divides safely)."""
        return max(self.length / self.messages, 1.0) if self.messages else 1.0


def idf(messages: float, df: float) -> float:
    """BM25's inverse document frequency: a rare term outweighs a common one, and no term
    weighs zero or less (a term in every message still counts a little)."""
    return math.log(1 + (messages - df + 0.5) / (df + 0.5))


def rarest_first(terms: Sequence[Term], messages: float) -> list[Term]:
    """The terms, rarest (highest idf) first; ties by lexeme, so the order is the same on every
    run."""
    return sorted(terms, key=lambda t: (-idf(messages, t.df), t.lexeme))


def within_budget(ordered: Sequence[Term], budget: int = MAX_SCORED) -> int:
    """How many of ``ordered`` (:func:`rarest_first`) one question reads: the rarest, then the
    next while their document frequencies sum to at most ``budget``."""
    taken, scored = 0, 0.0
    for term in ordered:
        if taken and scored + term.df > budget:
            break
        taken, scored = taken + 1, scored + term.df
    return taken


@dataclass(frozen=True)
class Ranked:
    """The lexical list: its rows, best first, and whether every term was read (``False`` only
    when :data:`MAX_SCORED` left the commonest terms out)."""

    rows: list[asyncpg.Record]
    exact: bool


async def question_statistics(
    conn: asyncpg.Connection,
    *,
    tenant: str,
    principal: str,
    words: Sequence[str],
    roles: Sequence[str],
    project: str | None,
    spelling: Spelling | None = None,
) -> Statistics:
    """The question's terms and the scope's counts, looked up (:data:`_STATISTICS`). With
    ``spelling`` (:func:`engram.projections.messages.spelling.read_spelling` of the question), a term
    no message in scope holds that comes from a word that is not a word of the question's
    language is corrected (:func:`corrections`): the correction is added to the terms, the
    term as asked stays. Without it nothing is corrected."""
    rows = await conn.fetch(_STATISTICS, tenant, principal, list(words), list(roles), project)
    if not rows:
        return Statistics(terms=(), messages=0.0, length=0.0)
    terms = {r["lexeme"]: float(r["df"]) for r in rows}
    missing = {t for t, df in terms.items() if df == 0}
    if missing and spelling is not None and spelling.misspelt:
        for near, df in (
            await corrections(conn, tenant, principal, missing, spelling, roles, project)
        ).items():
            terms.setdefault(near, df)
    return Statistics(
        terms=tuple(Term(lexeme, df) for lexeme, df in sorted(terms.items())),
        messages=rows[0]["n"],
        length=rows[0]["length"],
    )


_WORD_TERMS = """
SELECT w.word, v.lexeme, coalesce(sum(s.messages), 0)::float8 AS df
FROM unnest($3::text[]) AS w(word)
CROSS JOIN LATERAL unnest(to_tsvector('engram_english', w.word)) AS v
LEFT JOIN message_term_stats s ON s.tenant = $1 AND s.principal = $2 AND s.lexeme = v.lexeme
 AND s.role = ANY($4::text[]) AND ($5::text IS NULL OR s.project = $5)
GROUP BY w.word, v.lexeme
"""
"""Each word's lexeme (``engram_english``; a stop word has none) and how many messages in scope
hold it."""


async def corrections(
    conn: asyncpg.Connection,
    tenant: str,
    principal: str,
    missing: Set[str],
    spelling: Spelling,
    roles: Sequence[str],
    project: str | None,
) -> dict[str, float]:
    """The terms to add for the question's misspelt words whose lexeme is ``missing`` (no
    message in scope holds it), each with its document frequency: for each such word, the
    first of its word-list candidates (commonest first, one edit away: "meditaion" →
    "meditation") whose lexeme some message holds; failing that, for a question in the index's
    language (:data:`INDEX_LANGUAGE`), the principal's nearest lexeme (:func:`nearest_lexemes`:
    a name or a word the list lacks). The index's lexemes are English stems: a word of another
    language one or two letters from one of them is a different word, not a typing error."""
    candidates = [c for near in spelling.misspelt.values() for c in near]
    rows = await conn.fetch(
        _WORD_TERMS, tenant, principal, [*spelling.misspelt, *candidates], list(roles), project
    )
    lexemes: dict[str, list[tuple[str, float]]] = {}
    for row in rows:
        lexemes.setdefault(row["word"], []).append((row["lexeme"], row["df"]))
    added: dict[str, float] = {}
    unlisted: list[str] = []
    for word, near in spelling.misspelt.items():
        asked = [lexeme for lexeme, _ in lexemes.get(word, []) if lexeme in missing]
        if not asked:
            continue
        held = [(lexeme, df) for c in near for lexeme, df in lexemes.get(c, []) if df > 0]
        if held:
            added.setdefault(*held[0])
        elif spelling.language == INDEX_LANGUAGE:
            unlisted.extend(t for t in asked if _correctable(t))
    if unlisted:
        found = await nearest_lexemes(conn, tenant, principal, unlisted, roles, project)
        for near_lexeme, df in found.values():
            added.setdefault(near_lexeme, df)
    return added


MIN_CORRECTED = 4
"""The shortest term corrected: a short word shares too few letters to be told from another."""
SAME_START = 2
"""How many first letters a misspelling is taken to keep: typing errors are rarer at the start
of a word, and the prefix makes the candidates a range of an index."""


def _correctable(term: str) -> bool:
    """A term long enough to correct, and a word, not a number."""
    return len(term) >= MIN_CORRECTED and not any(c.isdigit() for c in term)


def edits_allowed(term: str) -> int:
    """How many edits a misspelling of ``term`` may be away: one for a short word, two from six
    letters on (a swap of two letters counts once)."""
    return 1 if len(term) < 6 else 2


def edit_distance(a: str, b: str) -> int:
    """Optimal string alignment distance: insertions, deletions, substitutions and swaps of two
    neighbouring letters, each one edit ("restuar" → "restaur" is one)."""
    previous2: list[int] = []
    previous = list(range(len(b) + 1))
    for i, x in enumerate(a, start=1):
        current = [i] + [0] * len(b)
        for j, y in enumerate(b, start=1):
            current[j] = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (x != y))
            if i > 1 and j > 1 and x == b[j - 2] and a[i - 2] == y:
                current[j] = min(current[j], previous2[j - 2] + 1)
        previous2, previous = previous, current
    return previous[-1]


_NEAREST = """
SELECT q.asked, s.lexeme, sum(s.messages)::float8 AS df
FROM unnest($3::text[], $6::text[], $7::text[]) AS q(asked, low, high)
JOIN message_term_stats s ON s.tenant = $1 AND s.principal = $2
 AND s.lexeme >= q.low AND s.lexeme < q.high AND starts_with(s.lexeme, q.low)
 AND abs(length(s.lexeme) - length(q.asked)) <= 2
WHERE s.role = ANY($4::text[]) AND ($5::text IS NULL OR s.project = $5)
GROUP BY q.asked, s.lexeme
"""
"""For each asked term, the principal's lexemes in scope that begin with the same
:data:`SAME_START` letters and are at most two letters longer or shorter: a range of the
counts' primary key, so it reads a few dozen rows however large the vocabulary."""


async def nearest_lexemes(
    conn: asyncpg.Connection,
    tenant: str,
    principal: str,
    terms: Sequence[str],
    roles: Sequence[str],
    project: str | None,
) -> dict[str, tuple[str, float]]:
    """Each term's nearest lexeme among the principal's messages in scope, and its document
    frequency: of the lexemes that begin as it does, the fewest edits away, within
    :func:`edits_allowed` (ties: the commoner, then by lexeme). A misspelling in the first
    letters is not corrected."""
    starts = [term[:SAME_START] for term in terms]
    after = [start[:-1] + chr(min(ord(start[-1]) + 1, 0x10FFFF)) for start in starts]
    rows = await conn.fetch(
        _NEAREST, tenant, principal, list(terms), list(roles), project, starts, after
    )
    best: dict[str, tuple[tuple[int, float, str], float]] = {}
    for row in rows:
        asked, lexeme = row["asked"], row["lexeme"]
        edits = edit_distance(asked, lexeme)
        if edits > edits_allowed(asked):
            continue
        key = (edits, -row["df"], lexeme)
        if asked not in best or key < best[asked][0]:
            best[asked] = (key, row["df"])
    return {asked: (key[2], df) for asked, (key, df) in best.items()}


async def best_messages(
    conn: asyncpg.Connection,
    stats: Statistics,
    *,
    tenant: str,
    principal: str,
    roles: Sequence[str],
    project: str | None,
    limit: int,
    budget: int = MAX_SCORED,
) -> Ranked:
    """The ``limit`` best messages in scope by BM25 over ``stats``'s terms, reading at most
    ``budget`` postings (see the module's docstring)."""
    ordered = [t for t in rarest_first(stats.terms, stats.messages) if t.df > 0]
    read = ordered[: within_budget(ordered, budget)]
    if not read:
        return Ranked(rows=[], exact=True)
    weights = stats.idf
    rows = await conn.fetch(
        _RANKED,
        tenant,
        principal,
        [t.lexeme for t in read],
        list(roles),
        project,
        limit,
        BM25_K1,
        BM25_B,
        [weights[t.lexeme] for t in read],
        stats.average_length,
    )
    return Ranked(rows=rows, exact=len(read) == len(ordered))
