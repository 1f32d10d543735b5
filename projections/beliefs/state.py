"""Loading what resolving a chunk of claims batches can consult, one query per table.

Resolution (:func:`resolution.chunk.resolve_chunk`) is pure; this reads its input, for
batches not yet applied (the store has checked their runs already): the beliefs resolution
compares each candidate with (see ``_load_beliefs``: never a whole key's history, which grows
with the principal's), every belief of content the chunk corrects or deletes, what the chunk's
episodes already cite, the entities it names, the principal's corrections and tombstones of
that content, and whether the principal was forgotten. Every lookup is an index range of a few
rows, so a batch costs the same at the hundredth batch of a principal's history as at the
ten-thousandth.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable, Sequence

import asyncpg

from engram.formation.corrections import (
    ContentParts,
    candidate_parts,
    content_hash,
    end_key,
    parts_hash,
)
from engram.formation.proposals import normalise_term
from engram.projections.rows import columns_of
from engram.resolution.beliefs import (
    BeliefRow,
    BeliefState,
    Cited,
    EntityRow,
    RejectionRow,
)
from engram.schemas.claims import ClaimEnd, ClaimsBatchFormed, EndKind
from engram.schemas.common import principal_hash
from engram.schemas.corrections import BeliefCorrected, BeliefDeleted, ContentKey

_BELIEF_COLUMNS = columns_of(BeliefRow)
_REJECTION_COLUMNS = columns_of(RejectionRow)


async def load_state(conn: asyncpg.Connection, batches: Sequence[ClaimsBatchFormed]) -> BeliefState:
    """What resolving ``batches`` consults. None of them may be applied already: the projector
    has just left out the applied ones and undone the ones it resolves again (so this no longer
    asks the database a second time; resolution still skips a batch given twice)."""
    todo = list(batches)
    corrected = _corrected(todo)
    claims, hashes = _claims_and_hashes(todo, corrected)
    beliefs = await _load_beliefs(conn, claims, corrected)
    cited = await _load_cited(conn, todo)
    beliefs += await _load_by_id(conn, {c[0] for c in cited} - {b.belief_id for b in beliefs})
    return BeliefState(
        beliefs,
        entities=await _load_entities(conn, todo),
        cited=cited,
        applied_runs=set(),
        rejections=await _load_rejections(conn, hashes),
        tombstones=await _load_tombstones(conn, hashes),
        forgotten=await _load_forgotten(conn, todo),
    )


Claim = tuple[str, str, str, str, str, str, str, bool]
"""(tenant, principal, subject key, relation, facet, object key, polarity, single-valued): one
claim a chunk's candidate makes, as resolution compares it."""


def _corrected(batches: Iterable[ClaimsBatchFormed]) -> list[tuple[str, str, str]]:
    """(tenant, principal, content hash) of what the chunk corrects or deletes: every belief
    of that content is read, whatever its status (a correction or deletion applies to all)."""
    return sorted(
        {
            (b.tenant, b.principal, b.correction.content_hash)
            for b in batches
            if isinstance(b.correction, BeliefCorrected | BeliefDeleted)
        }
    )


def _claims_and_hashes(
    batches: Sequence[ClaimsBatchFormed], corrected: Iterable[tuple[str, str, str]]
) -> tuple[list[Claim], list[tuple[str, str, str]]]:
    """The claims the chunk's candidates make, and (tenant, principal, content hash) of
    everything the chunk proposes, corrects or deletes (``corrected``: :func:`_corrected`'s,
    computed once by the caller), what its rejections and tombstones are looked up by. One pass reads each candidate's parts once for both (``candidate_hash`` is
    ``parts_hash`` of the same parts; they were read twice, ~1.5 µs a candidate)."""
    claims: set[Claim] = set()
    hashes: set[tuple[str, str, str]] = set()
    for b in batches:
        for c in b.candidates:
            parts = candidate_parts(c)
            subject, relation, obj, facet, polarity = parts
            single = c.cardinality == "single"
            claims.add((b.tenant, b.principal, subject, relation, facet, obj, polarity, single))
            hashes.add((b.tenant, b.principal, parts_hash(parts)))
    hashes |= {
        (b.tenant, b.principal, parts_hash(_parts(b.correction.content)))
        for b in batches
        if isinstance(b.correction, BeliefCorrected)
    }
    hashes.update(corrected)
    return sorted(claims), sorted(hashes)


def _parts(key: ContentKey) -> ContentParts:
    return (key.subject_key, key.relation, key.object_key, key.facet, key.polarity)


_CLAIM_BELIEFS = """
WITH k AS (
    SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[],
                         $6::text[], $7::text[], $8::boolean[])
      AS k(tenant, principal, subject_key, relation, facet, object_key, polarity, single)
)
SELECT b.* FROM belief b JOIN k
  ON (b.tenant, b.principal, b.subject_key, b.relation, b.facet)
   = (k.tenant, k.principal, k.subject_key, k.relation, k.facet)
WHERE b.status IN ('active', 'provisional') AND (k.single OR b.object_key = k.object_key)
UNION
SELECT past.* FROM k CROSS JOIN LATERAL (
    SELECT b.* FROM belief b
    WHERE (b.tenant, b.principal, b.subject_key, b.relation, b.facet, b.object_key, b.polarity)
        = (k.tenant, k.principal, k.subject_key, k.relation, k.facet, k.object_key, k.polarity)
      AND b.status = 'superseded'
    ORDER BY b.valid_from DESC, b.belief_id DESC LIMIT 1
) past WHERE k.single
UNION
SELECT b.* FROM belief b JOIN k
  ON (b.tenant, b.principal, b.subject_key, b.relation, b.facet)
   = (k.tenant, k.principal, k.subject_key, k.relation, k.facet)
WHERE b.object_key IS NULL AND b.status IN ('active', 'provisional', 'superseded')
UNION
SELECT b.* FROM belief b
JOIN unnest($9::text[], $10::text[], $11::text[]) AS h(tenant, principal, content_hash)
  ON (b.tenant, b.principal, b.content_hash) = (h.tenant, h.principal, h.content_hash)
"""


async def _load_beliefs(
    conn: asyncpg.Connection, claims: Sequence[Claim], corrected: Sequence[tuple[str, str, str]]
) -> list[BeliefRow]:
    """The beliefs resolution consults for ``claims``, and every belief of ``corrected``
    content. Resolution (:func:`resolution.resolve.resolve`) compares a candidate with the
    current beliefs of the same claim (a duplicate reinforces; an assertion replaces a live
    retraction of the same object) and, for a single-valued relation, with every current value
    of the key (the rivals) and the newest superseded value of the same claim (the history an
    older-dated repeat is linked to). A multi-valued relation's other values, and older past
    values, never decide anything, so they stay in the database: both grow with the
    principal's history. Rows written before migration 0006 have no object key and are always
    read. Beliefs the chunk's episodes cite (a same-source replay) come from ``_load_cited``."""
    if not claims and not corrected:
        return []
    columns = [list(c) for c in zip(*claims, strict=True)] if claims else [[]] * 8
    by_hash = [list(c) for c in zip(*corrected, strict=True)] if corrected else [[]] * 3
    rows = await conn.fetch(_CLAIM_BELIEFS, *columns, *by_hash)
    return [_belief(row) for row in rows]


async def _load_cited(
    conn: asyncpg.Connection, batches: Sequence[ClaimsBatchFormed]
) -> list[Cited]:
    """(belief, project, episode, message ordinal) for every belief the chunk's episodes
    already cite: all a same-source replay is compared against. An episode is its tenant's,
    principal's and project's event id.

    One index probe of ``evidence`` (by episode) per episode, whatever the planner's
    statistics say: ``OFFSET 0`` keeps the lateral subquery from being flattened into a join,
    which the planner ran as a scan of the whole table, sorted or hashed, on every chunk —
    growing with the table (a fresh database, or a generation being replayed, is not analysed
    for its first minute), and on a prepared statement's generic plan whatever the table. On
    the bench corpus in chunks of 300 this statement's backend CPU went from 5.2 to 1.4 µs a
    batch (and from 12.8 to 2.3 in chunks of 50); it returns the same rows."""
    episodes = sorted({(b.tenant, b.principal, b.project, b.episode_id) for b in batches})
    if not episodes:
        return []
    tenants, principals, projects, ids = (list(c) for c in zip(*episodes, strict=True))
    rows = await conn.fetch(
        """
        SELECT e.belief_id, e.project, e.episode_id, e.message_ordinal
        FROM unnest($1::text[], $2::text[], $3::text[], $4::uuid[])
          AS k(tenant, principal, project, episode_id)
        CROSS JOIN LATERAL (
            SELECT e.belief_id, e.project, e.episode_id, e.message_ordinal FROM evidence e
            WHERE e.episode_id = k.episode_id AND e.tenant = k.tenant
              AND e.principal = k.principal AND e.project = k.project
            OFFSET 0
        ) e
        """,
        tenants,
        principals,
        projects,
        ids,
    )
    return [(r["belief_id"], r["project"], r["episode_id"], r["message_ordinal"]) for r in rows]


async def _load_by_id(conn: asyncpg.Connection, ids: set[uuid.UUID]) -> list[BeliefRow]:
    if not ids:
        return []
    rows = await conn.fetch("SELECT * FROM belief WHERE belief_id = ANY($1::uuid[])", sorted(ids))
    return [_belief(row) for row in rows]


def _belief(row: asyncpg.Record) -> BeliefRow:
    values = {name: row[name] for name in _BELIEF_COLUMNS}
    values["object_key"] = row["object_key"] or end_key(
        ClaimEnd(kind=EndKind(row["object_kind"]), text=row["object_text"])
    )
    for array in ("sensitivity", "origin_scopes", "conflicts_with", "excluded_scopes"):
        values[array] = list(row[array])
    belief = BeliefRow(**values)
    if belief.content_hash is None:  # written before migration 0008 with no object key
        belief.content_hash = content_hash(
            ContentKey(
                subject_key=belief.subject_key,
                relation=belief.relation,
                object_key=belief.object_key,
                facet=belief.facet,
                polarity=belief.polarity,
            )
        )
    return belief


async def _load_entities(
    conn: asyncpg.Connection, batches: Sequence[ClaimsBatchFormed]
) -> list[EntityRow]:
    names = sorted(
        {
            (b.tenant, b.principal, normalise_term(end.text))
            for b in batches
            for c in b.candidates
            for end in (c.subject, c.object)
            if end.kind is EndKind.ENTITY
        }
    )
    if not names:
        return []
    tenants, principals, normalized = (list(c) for c in zip(*names, strict=True))
    rows = await conn.fetch(
        """
        SELECT e.* FROM entity e
        JOIN unnest($1::text[], $2::text[], $3::text[]) AS k(tenant, principal, normalized_name)
          USING (tenant, principal, normalized_name)
        """,
        tenants,
        principals,
        normalized,
    )
    return [
        EntityRow(
            r["entity_id"],
            r["tenant"],
            r["principal"],
            r["normalized_name"],
            r["canonical_name"],
            list(r["aliases"]),
        )
        for r in rows
    ]


async def _load_rejections(
    conn: asyncpg.Connection, hashes: Sequence[tuple[str, str, str]]
) -> list[RejectionRow]:
    if not hashes:
        return []
    rows = await conn.fetch(
        """
        SELECT r.* FROM belief_rejection r
        JOIN unnest($1::text[], $2::text[], $3::text[]) AS h(tenant, principal, content_hash)
          USING (tenant, principal, content_hash)
        """,
        *(list(c) for c in zip(*hashes, strict=True)),
    )
    return [RejectionRow(**{name: row[name] for name in _REJECTION_COLUMNS}) for row in rows]


async def _load_tombstones(
    conn: asyncpg.Connection, hashes: Sequence[tuple[str, str, str]]
) -> list[tuple[str, str, str]]:
    if not hashes:
        return []
    rows = await conn.fetch(
        """
        SELECT t.tenant, t.principal, t.content_hash FROM belief_tombstone t
        JOIN unnest($1::text[], $2::text[], $3::text[]) AS h(tenant, principal, content_hash)
          USING (tenant, principal, content_hash)
        """,
        *(list(c) for c in zip(*hashes, strict=True)),
    )
    return [(r["tenant"], r["principal"], r["content_hash"]) for r in rows]


async def _load_forgotten(
    conn: asyncpg.Connection, batches: Sequence[ClaimsBatchFormed]
) -> list[str]:
    principals = sorted({principal_hash(b.tenant, b.principal) for b in batches})
    rows = await conn.fetch(
        "SELECT principal_hash FROM principal_tombstone WHERE principal_hash = ANY($1::text[]) "
        "UNION SELECT principal_hash FROM public.principal_forgotten "
        "WHERE principal_hash = ANY($1::text[])",
        principals,
    )
    return [row["principal_hash"] for row in rows]
