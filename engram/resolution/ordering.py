"""One order for a principal's claims, whatever order the claims topic delivers them in.

A principal's projects can sit on different episode partitions; the formation workers publish
their claims batches as those partitions interleave, which differs between one worker and two,
between a first pass and a replay. Resolution is order-sensitive (which claim creates a belief
and which reinforces it, which value supersedes which, which of two conflicting values is
refused), so the projector never resolves in arrival order: it resolves every principal's
batches in the **canonical order** — event time, then project, episode id and batch id — and
when a batch arrives that belongs before one already applied, it undoes the principal's
applied batches after it (:mod:`.undo`) and resolves them again with it, from the batches it
keeps (``claims_history``); a deletion resolves the principal again from nothing. The
projection is then a function of the *set* of batches per principal. Pure: these functions decide the order and what to keep; the store
reads and writes.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from datetime import UTC, datetime, timedelta
from itertools import groupby
from typing import Protocol
from uuid import UUID

from engram.formation.core import candidate_refusal_id
from engram.formation.corrections import candidate_hash
from engram.schemas.claims import ClaimsBatchFormed, Refusal, RefusalReason
from engram.schemas.corrections import BeliefCorrected, BeliefDeleted, ContentKey

PrincipalKey = tuple[str, str]
"""(tenant, principal)."""


class Placed(Protocol):
    """What a batch's place in canonical order is read from: the fields a claims batch keeps in
    clear whether sealed or not (``engram.schemas.sealed.SealedClaimsBatch`` has them too)."""

    @property
    def tenant(self) -> str: ...
    @property
    def principal(self) -> str: ...
    @property
    def project(self) -> str: ...
    @property
    def episode_id(self) -> UUID: ...
    @property
    def batch_id(self) -> UUID: ...
    @property
    def occurred_at(self) -> datetime: ...


_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_MICROSECOND = timedelta(microseconds=1)
_TIME_BIAS = 1 << 62
"""Added to microseconds since the epoch so any representable time packs as unsigned."""
REDACTED = "redacted"
DELETED_DETAIL = "the principal deleted this"


def order_key(batch: Placed) -> bytes:
    """The batch's place in its principal's canonical order, as bytes that sort the same in
    Python and in PostgreSQL (``bytea`` compares byte by byte; text would follow a collation).

    Event time first, so a value stated later supersedes one stated earlier whichever arrives
    first; then project, episode and batch id, which break ties between batches of one instant.
    """
    micros = (batch.occurred_at - _EPOCH) // _MICROSECOND + _TIME_BIAS
    return b"".join(
        (
            micros.to_bytes(8, "big"),
            batch.project.encode(),
            b"\x00",
            batch.episode_id.bytes,
            batch.batch_id.bytes,
        )
    )


def principal_of(batch: Placed) -> PrincipalKey:
    return batch.tenant, batch.principal


def canonical(batches: Iterable[ClaimsBatchFormed]) -> list[ClaimsBatchFormed]:
    """``batches`` grouped by principal, each principal's in canonical order (a stable sort, so
    a batch redelivered within one chunk stays beside its first copy and is skipped)."""
    return sorted(batches, key=lambda b: (b.tenant, b.principal, order_key(b)))


def principals_to_rewind(
    batches: Iterable[ClaimsBatchFormed], last_applied: Mapping[PrincipalKey, bytes]
) -> set[PrincipalKey]:
    """The principals whose new ``batches`` cannot simply follow what was applied: one belongs
    before the principal's last applied batch (``last_applied``: its order key), or deletes
    content (the deleted words are scrubbed from every kept batch, and the principal is
    resolved again from what is left, so every arrival order ends in the same rows)."""
    rewind: set[PrincipalKey] = set()
    for batch in batches:
        who = principal_of(batch)
        last = last_applied.get(who)
        if isinstance(batch.correction, BeliefDeleted) or (
            last is not None and order_key(batch) < last
        ):
            rewind.add(who)
    return rewind


def rewind_points(
    batches: Iterable[ClaimsBatchFormed], rewind: set[PrincipalKey]
) -> dict[PrincipalKey, bytes | None]:
    """Where each principal in ``rewind`` is resolved again from: the order key of its earliest
    new batch (only the applied batches after it are undone and resolved again, see
    :mod:`resolution.undo`), or ``None`` to resolve it again from nothing — when a new batch
    deletes content, whose words go from every kept batch, before it as well as after."""
    points: dict[PrincipalKey, bytes | None] = {}
    for batch in batches:
        who = principal_of(batch)
        if who not in rewind:
            continue
        if isinstance(batch.correction, BeliefDeleted):
            points[who] = None
            continue
        key, earliest = order_key(batch), points.get(who, b"")
        if earliest is not None:
            points[who] = min(key, earliest) if earliest else key
    return points


def chunk_order(
    todo: Sequence[ClaimsBatchFormed],
    rewind: set[PrincipalKey],
    kept: Iterable[ClaimsBatchFormed],
    tombstones: Iterable[tuple[str, str, str]],
) -> list[ClaimsBatchFormed]:
    """What to resolve for a chunk, in order: the new batches of principals that need no
    rewind, and for those in ``rewind`` the batches ``kept`` for them that are undone (all, or
    the suffix after the earliest new one, :func:`rewind_points`) with their new ones —
    each principal's in canonical order, without the words of what it deleted (``tombstones``:
    (tenant, principal, content hash) already known)."""
    rewound = [*kept, *(b for b in todo if principal_of(b) in rewind)]
    ordered = canonical([*(b for b in todo if principal_of(b) not in rewind), *rewound])
    known: dict[PrincipalKey, set[str]] = {}
    for tenant, principal, digest in tombstones:
        known.setdefault((tenant, principal), set()).add(digest)
    result: list[ClaimsBatchFormed] = []
    for who, group in groupby(ordered, key=principal_of):
        mine = list(group)
        result.extend(redact(mine, known.get(who, set()) | deleted_hashes(mine)))
    return result


def deleted_hashes(batches: Iterable[ClaimsBatchFormed]) -> set[str]:
    return {b.correction.content_hash for b in batches if isinstance(b.correction, BeliefDeleted)}


def redact(batches: Sequence[ClaimsBatchFormed], deleted: set[str]) -> list[ClaimsBatchFormed]:
    """``batches`` (one principal's) with the words of ``deleted`` content gone: a candidate of
    that content becomes the refusal resolution would record for it (tombstoned, no words);
    refusals stating its statement or quoting its words keep their row but lose the words; a
    correction of it keeps its hash and kind only. What a deletion removes from the projection
    is thereby also gone from what a re-resolution reads."""
    if not deleted:
        return list(batches)
    gone = [c for b in batches for c in b.candidates if candidate_hash(c) in deleted]
    statements = {c.statement for c in gone}
    quotes = {c.quote for c in gone if c.quote}
    return [_redact_batch(b, deleted, statements, quotes) for b in batches]


def _redact_batch(
    batch: ClaimsBatchFormed, deleted: set[str], statements: set[str], quotes: set[str]
) -> ClaimsBatchFormed:
    kept = [c for c in batch.candidates if candidate_hash(c) not in deleted]
    tombstoned = [
        Refusal.model_construct(
            refusal_id=candidate_refusal_id(c.candidate_id, RefusalReason.TOMBSTONED),
            message_ordinal=c.message_ordinal,
            role=c.role,
            relation=c.relation,
            statement="",
            quote="",
            reason=RefusalReason.TOMBSTONED,
            detail=DELETED_DETAIL,
            extractor=c.extractor,
        )
        for c in batch.candidates
        if candidate_hash(c) in deleted
    ]
    refusals = [_redact_refusal(r, statements, quotes) for r in batch.refusals]
    correction = batch.correction
    if isinstance(correction, BeliefCorrected) and correction.content_hash in deleted:
        correction = correction.model_copy(
            update={
                "content": ContentKey(
                    subject_key=REDACTED, relation=correction.content.relation, object_key=REDACTED
                ),
                "statement": "",
                "replacement": REDACTED if correction.replacement is not None else None,
            }
        )
    if (
        len(kept) == len(batch.candidates)
        and refusals == batch.refusals
        and correction is batch.correction
    ):
        return batch
    return batch.model_copy(
        update={"candidates": kept, "refusals": [*refusals, *tombstoned], "correction": correction}
    )


def _redact_refusal(refusal: Refusal, statements: set[str], quotes: set[str]) -> Refusal:
    overlaps = refusal.quote and any(q in refusal.quote or refusal.quote in q for q in quotes)
    if (refusal.statement and refusal.statement in statements) or overlaps:
        return refusal.model_copy(update={"statement": "", "quote": ""})
    return refusal
