"""Resolution: how an admitted candidate meets what the principal already believes.

Seed 000's order: same-source replay (no-op) → duplicate (reinforce) → contradiction
(supersede) or conflict (both live, linked, flagged). Ordering uses authority first
(user > affirmed > inferred), then the time of the source event — never processing time — so a
replay of the log resolves exactly as the first pass did. Pure: the projector loads the live
beliefs that share a candidate's conflict key and writes whatever this returns.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field, replace
from datetime import datetime

from formation.proposals import normalise_term
from schemas.claims import Authority, Candidate, ClaimEnd, EndKind, RefusalReason
from schemas.common import Polarity

AUTHORITY_RANK = {Authority.INFERRED: 1, Authority.AFFIRMED: 2, Authority.USER: 3}
REINFORCE_STEP = 0.05
PROMOTION_SCOPES = 2


def end_key(end: ClaimEnd) -> str:
    """The identity of a claim end within a principal: normalised name, never meaning."""
    match end.kind:
        case EndKind.SPEAKER:
            return "speaker"
        case EndKind.PROJECT:
            return f"project:{end.text}"
        case _:
            return f"{end.kind.value}:{normalise_term(end.text)}"


@dataclass(frozen=True)
class LiveBelief:
    """The part of a current belief that resolution needs."""

    belief_id: uuid.UUID
    subject_key: str
    relation: str
    object_key: str
    facet: str
    polarity: Polarity
    authority: Authority
    valid_from: datetime
    is_single: bool
    portability: str
    scope: str
    origin_scopes: tuple[str, ...]
    evidence: frozenset[tuple[uuid.UUID, int]] = field(default_factory=frozenset)
    """(episode, message ordinal) pairs already cited; at least those of the consolidating
    episode, which is all a same-source replay is compared against."""
    superseded: bool = False
    """A past value kept for history: never current again, but a replay can meet it."""


@dataclass(frozen=True)
class Create:
    candidate: Candidate
    belief_id: uuid.UUID
    supersedes: tuple[uuid.UUID, ...] = ()
    conflicts_with: tuple[uuid.UUID, ...] = ()


@dataclass(frozen=True)
class Reinforce:
    candidate: Candidate
    belief_id: uuid.UUID
    promote_to_user_scope: bool
    origin_scopes: tuple[str, ...]


@dataclass(frozen=True)
class Replayed:
    """The same source already produced this belief: nothing changes."""

    candidate: Candidate
    belief_id: uuid.UUID


@dataclass(frozen=True)
class ConflictWithHistory:
    """An older-dated claim repeats a value that was already superseded: it is linked, as a
    conflict, to the value that replaced it, instead of reverting to the old value."""

    candidate: Candidate
    past_belief_id: uuid.UUID
    current_belief_id: uuid.UUID


@dataclass(frozen=True)
class Rejected:
    candidate: Candidate
    reason: RefusalReason
    detail: str


Decision = Create | Reinforce | Replayed | ConflictWithHistory | Rejected


def conflict_key(candidate: Candidate) -> tuple[str, str, str]:
    return end_key(candidate.subject), candidate.relation, candidate.facet or ""


def resolve(
    candidate: Candidate,
    *,
    episode_id: uuid.UUID,
    occurred_at: datetime,
    belief_id: uuid.UUID,
    live: list[LiveBelief],
) -> Decision:
    """Decide what ``candidate`` does to the beliefs sharing its conflict key.

    ``live`` holds the current beliefs of the key and, marked ``superseded``, its past values.
    """
    subject_key, relation, facet = conflict_key(candidate)
    object_key = end_key(candidate.object)
    same_key = [
        b for b in live if (b.subject_key, b.relation, b.facet) == (subject_key, relation, facet)
    ]
    same_claim = [
        b for b in same_key if b.object_key == object_key and b.polarity == candidate.polarity
    ]
    for belief in same_claim:
        if (episode_id, candidate.message_ordinal) in belief.evidence:
            return Replayed(candidate, belief.belief_id)
    current = [b for b in same_key if not b.superseded]
    for belief in same_claim:
        if not belief.superseded:
            return _reinforce(candidate, belief)
    exact = [b for b in current if b.object_key == object_key]
    if candidate.polarity is Polarity.RETRACT:
        # A retraction supersedes what it retracts and nothing else.
        return Create(candidate, belief_id, supersedes=tuple(b.belief_id for b in exact))
    # An assertion replaces a live retraction of the very same claim.
    supersedes = [b.belief_id for b in exact if b.polarity is Polarity.RETRACT]
    if candidate.cardinality == "many":
        return Create(candidate, belief_id, supersedes=tuple(supersedes))
    rivals = [b for b in current if b.polarity is Polarity.ASSERT and b.object_key != object_key]
    history = [b for b in same_claim if b.superseded]
    return _contradict(candidate, belief_id, occurred_at, rivals, supersedes, history)


def _reinforce(candidate: Candidate, belief: LiveBelief) -> Reinforce:
    scopes = tuple(sorted({*belief.origin_scopes, candidate.scope}))
    promote = (
        belief.scope != "user"
        and belief.portability != "local"
        and len({s for s in scopes if s.startswith("project:")}) >= PROMOTION_SCOPES
    )
    return Reinforce(candidate, belief.belief_id, promote, scopes)


def _contradict(
    candidate: Candidate,
    belief_id: uuid.UUID,
    occurred_at: datetime,
    current: list[LiveBelief],
    supersedes: list[uuid.UUID],
    history: list[LiveBelief],
) -> Decision:
    conflicts: list[uuid.UUID] = []
    for belief in current:
        if belief.valid_from > occurred_at and history:
            return ConflictWithHistory(candidate, history[-1].belief_id, belief.belief_id)
        if belief.valid_from == occurred_at:
            return Rejected(
                candidate,
                RefusalReason.CONFLICTING_VALUE,
                "another value of this single-valued relation starts at the same time",
            )
        if belief.valid_from > occurred_at:
            return Rejected(
                candidate,
                RefusalReason.OUT_OF_ORDER,
                "a later-dated value is already current; correct it instead",
            )
        if AUTHORITY_RANK[candidate.authority] >= AUTHORITY_RANK[belief.authority]:
            supersedes.append(belief.belief_id)
        else:
            conflicts.append(belief.belief_id)
    return Create(
        candidate, belief_id, supersedes=tuple(supersedes), conflicts_with=tuple(conflicts)
    )


def applied(
    decision: Decision, live: list[LiveBelief], *, episode_id: uuid.UUID, occurred_at: datetime
) -> list[LiveBelief]:
    """The live set after ``decision``, so later candidates of one batch see earlier ones."""
    match decision:
        case Create(candidate=c, belief_id=bid, supersedes=gone):
            remaining = [replace(b, superseded=True) if b.belief_id in gone else b for b in live]
            subject_key, relation, facet = conflict_key(c)
            return [
                *remaining,
                LiveBelief(
                    belief_id=bid,
                    subject_key=subject_key,
                    relation=relation,
                    object_key=end_key(c.object),
                    facet=facet,
                    polarity=c.polarity,
                    authority=c.authority,
                    valid_from=occurred_at,
                    is_single=c.cardinality == "single",
                    portability=c.portability.value,
                    scope=c.scope,
                    origin_scopes=(c.scope,),
                    evidence=frozenset({(episode_id, c.message_ordinal)}),
                ),
            ]
        case Reinforce(candidate=c, belief_id=bid, origin_scopes=scopes, promote_to_user_scope=up):
            return [
                replace(
                    b,
                    origin_scopes=scopes,
                    scope="user" if up else b.scope,
                    evidence=b.evidence | {(episode_id, c.message_ordinal)},
                )
                if b.belief_id == bid
                else b
                for b in live
            ]
        case _:
            return live
