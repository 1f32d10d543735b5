"""Loading what resolving a chunk of claims batches can consult, one query per table.

Resolution (:func:`formation.resolution.resolve_chunk`) is pure; this reads its input: the runs
already applied, the beliefs of every conflict key and content the chunk names (current ones,
and past values of the same objects), which of those the chunk's episodes already cite, the
entities it names, the principal's corrections and tombstones of that content, and whether
the principal was forgotten.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import asyncpg

from formation.beliefs import (
    BeliefRow,
    BeliefState,
    EntityRow,
    RejectionRow,
    end_key,
    principal_hash,
)
from formation.corrections import ContentParts, candidate_parts, content_hash, parts_hash
from formation.proposals import normalise_term
from projections.rows import columns_of
from schemas.claims import ClaimEnd, ClaimsBatchFormed, EndKind
from schemas.corrections import BeliefCorrected, BeliefDeleted, ContentKey

_BELIEF_COLUMNS = columns_of(BeliefRow)
_REJECTION_COLUMNS = columns_of(RejectionRow)

Content = tuple[str, str, ContentParts]
"""(tenant, principal, content key parts) a chunk names."""


async def load_state(conn: asyncpg.Connection, batches: Sequence[ClaimsBatchFormed]) -> BeliefState:
    applied = await conn.fetch(
        "SELECT run_id FROM consolidation_run WHERE run_id = ANY($1::uuid[])",
        [b.batch_id for b in batches],
    )
    applied_runs = {row["run_id"] for row in applied}
    todo = [b for b in batches if b.batch_id not in applied_runs]
    contents = _contents(todo)
    hashes = _hashes(todo, contents)
    beliefs = await _load_beliefs(conn, contents, hashes)
    cited = await conn.fetch(
        "SELECT belief_id, episode_id, message_ordinal FROM evidence "
        "WHERE episode_id = ANY($1::uuid[]) AND belief_id = ANY($2::uuid[])",
        sorted({b.episode_id for b in todo}),
        [b.belief_id for b in beliefs],
    )
    return BeliefState(
        beliefs,
        entities=await _load_entities(conn, todo),
        cited=[(r["belief_id"], r["episode_id"], r["message_ordinal"]) for r in cited],
        applied_runs=applied_runs,
        rejections=await _load_rejections(conn, hashes),
        tombstones=await _load_tombstones(conn, hashes),
        forgotten=await _load_forgotten(conn, todo),
    )


def _contents(batches: Iterable[ClaimsBatchFormed]) -> list[Content]:
    found = [(b.tenant, b.principal, candidate_parts(c)) for b in batches for c in b.candidates]
    found += [
        (b.tenant, b.principal, _parts(b.correction.content))
        for b in batches
        if isinstance(b.correction, BeliefCorrected)
    ]
    return found


def _parts(key: ContentKey) -> ContentParts:
    return (key.subject_key, key.relation, key.object_key, key.facet, key.polarity)


def _hashes(
    batches: Iterable[ClaimsBatchFormed], contents: Iterable[Content]
) -> list[tuple[str, str, str]]:
    """(tenant, principal, content hash) of everything the chunk proposes, corrects or deletes."""
    found = {(t, p, parts_hash(parts)) for t, p, parts in contents}
    found |= {
        (b.tenant, b.principal, b.correction.content_hash)
        for b in batches
        if isinstance(b.correction, BeliefDeleted)
    }
    return sorted(found)


async def _load_beliefs(
    conn: asyncpg.Connection, contents: Sequence[Content], hashes: Sequence[tuple[str, str, str]]
) -> list[BeliefRow]:
    if not contents and not hashes:
        return []
    keys = sorted({(t, p, k[0], k[1], k[3]) for t, p, k in contents})
    objects = sorted({k[2] for _, _, k in contents})
    columns = [list(c) for c in zip(*keys, strict=True)] if keys else [[], [], [], [], []]
    by_hash = [list(c) for c in zip(*hashes, strict=True)] if hashes else [[], [], []]
    rows = await conn.fetch(
        """
        SELECT b.* FROM belief b
        JOIN unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[])
          AS k(tenant, principal, subject_key, relation, facet)
          ON (b.tenant, b.principal, b.subject_key, b.relation, b.facet)
           = (k.tenant, k.principal, k.subject_key, k.relation, k.facet)
        WHERE b.status IN ('active', 'provisional')
           OR (b.status = 'superseded' AND (b.object_key IS NULL OR b.object_key = ANY($6)))
        UNION
        SELECT b.* FROM belief b
        JOIN unnest($7::text[], $8::text[], $9::text[]) AS h(tenant, principal, content_hash)
          ON (b.tenant, b.principal, b.content_hash) = (h.tenant, h.principal, h.content_hash)
        """,
        *columns,
        objects,
        *by_hash,
    )
    # Only past values of the objects a chunk names are read: resolution meets no others, and
    # a key's history grows with every change of value.
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
        "SELECT principal_hash FROM principal_tombstone WHERE principal_hash = ANY($1::text[])",
        principals,
    )
    return [row["principal_hash"] for row in rows]
