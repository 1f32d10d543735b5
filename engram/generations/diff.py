"""The difference between two generations, by content: what a re-derivation would change.

Beliefs are matched by their content key (tenant, principal and the belief's content hash —
subject, relation, object, facet, polarity), never by id: a replay mints new ids. A belief
whose value changed has another content hash, so it shows as one removed and one added; a
belief with the same content but another status or confidence is *changed*. Refusals are
compared as counts by reason. :func:`diff_generations` is pure; :func:`load_side` reads one
generation's rows.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field

import asyncpg

ContentKey = tuple[str, str, str]
"""(tenant, principal, content hash)."""


@dataclass(frozen=True)
class DiffBelief:
    tenant: str
    principal: str
    content_hash: str
    relation: str
    statement: str
    status: str
    confidence: float

    @property
    def key(self) -> ContentKey:
        return (self.tenant, self.principal, self.content_hash)


@dataclass(frozen=True)
class Side:
    """One generation's beliefs (one per content key) and refusal counts by reason."""

    beliefs: tuple[DiffBelief, ...]
    refusals: dict[str, int] = field(default_factory=dict)


@dataclass(frozen=True)
class Changed:
    before: DiffBelief
    after: DiffBelief


@dataclass(frozen=True)
class GenerationDiff:
    added: list[DiffBelief]
    removed: list[DiffBelief]
    changed: list[Changed]
    refusals: dict[str, tuple[int, int]]
    principals: dict[str, tuple[int, int]]

    @property
    def empty(self) -> bool:
        no_refusal_change = all(a == b for a, b in self.refusals.values())
        return not (self.added or self.removed or self.changed) and no_refusal_change

    def as_json(self) -> dict[str, object]:
        return {
            "added": [_belief_json(b) for b in self.added],
            "removed": [_belief_json(b) for b in self.removed],
            "changed": [
                {**_belief_json(c.after), "before": _state(c.before), "after": _state(c.after)}
                for c in self.changed
            ],
            "refusals": {r: {"a": a, "b": b} for r, (a, b) in self.refusals.items()},
            "principals": {p: {"a": a, "b": b} for p, (a, b) in self.principals.items()},
        }


def diff_generations(a: Side, b: Side) -> GenerationDiff:
    """What ``b`` has that ``a`` has not, what it lost, and what it holds differently."""
    before = {belief.key: belief for belief in a.beliefs}
    after = {belief.key: belief for belief in b.beliefs}
    added = [after[k] for k in sorted(after.keys() - before.keys())]
    removed = [before[k] for k in sorted(before.keys() - after.keys())]
    changed = [
        Changed(before[k], after[k])
        for k in sorted(before.keys() & after.keys())
        if _state(before[k]) != _state(after[k])
    ]
    reasons = sorted(a.refusals.keys() | b.refusals.keys())
    return GenerationDiff(
        added=added,
        removed=removed,
        changed=changed,
        refusals={r: (a.refusals.get(r, 0), b.refusals.get(r, 0)) for r in reasons},
        principals=_principal_totals(a.beliefs, b.beliefs),
    )


def _principal_totals(
    a: Iterable[DiffBelief], b: Iterable[DiffBelief]
) -> dict[str, tuple[int, int]]:
    count_a = Counter(f"{x.tenant}/{x.principal}" for x in a)
    count_b = Counter(f"{x.tenant}/{x.principal}" for x in b)
    return {p: (count_a[p], count_b[p]) for p in sorted(count_a.keys() | count_b.keys())}


def _state(belief: DiffBelief) -> dict[str, object]:
    return {"status": belief.status, "confidence": round(belief.confidence, 4)}


def _belief_json(belief: DiffBelief) -> dict[str, object]:
    return {
        "tenant": belief.tenant,
        "principal": belief.principal,
        "content_hash": belief.content_hash,
        "relation": belief.relation,
        "statement": belief.statement,
        **_state(belief),
    }


_BELIEFS = """
SELECT DISTINCT ON (tenant, principal, coalesce(content_hash, statement))
       tenant, principal, coalesce(content_hash, statement) AS content_hash, relation,
       statement, status, confidence
FROM "{schema}".belief
WHERE ($1::text IS NULL OR principal = $1) AND ($2::text IS NULL OR tenant = $2)
ORDER BY tenant, principal, coalesce(content_hash, statement),
         (status IN ('active', 'provisional')) DESC, valid_from DESC, belief_id
"""
_REFUSALS = """
SELECT reason, count(*) AS n FROM "{schema}".refusal
WHERE ($1::text IS NULL OR principal = $1) AND ($2::text IS NULL OR tenant = $2)
GROUP BY reason
"""


async def load_side(
    db: asyncpg.Connection | asyncpg.Pool,
    schema: str,
    *,
    principal: str | None = None,
    tenant: str | None = None,
) -> Side:
    """One generation's side of a diff: per content key its current row (else its latest)."""
    rows = await db.fetch(_BELIEFS.format(schema=schema), principal, tenant)
    refusals = await db.fetch(_REFUSALS.format(schema=schema), principal, tenant)
    beliefs = tuple(
        DiffBelief(
            r["tenant"],
            r["principal"],
            r["content_hash"],
            r["relation"],
            r["statement"],
            r["status"],
            float(r["confidence"]),
        )
        for r in rows
    )
    return Side(beliefs, {r["reason"]: int(r["n"]) for r in refusals})
