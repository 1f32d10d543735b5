"""Deciding what one admitted candidate does to what the principal already believes.

Seed 000's order: same-source replay (no-op) → duplicate (reinforce) → contradiction
(supersede) or conflict (both live, linked, flagged). Ordering uses authority first
(user > affirmed > inferred), then the time of the source event — never processing time — so a
replay of the log resolves exactly as the first pass did. Pure: this names the decision;
:mod:`.resolution` turns decisions into rows, and the store writes them. A decision is made
for every candidate and read once, so it is a plain slotted dataclass (a frozen one costs
several times as much to construct).
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime

from engram.formation.corrections import ContentParts
from engram.formation.proposals import normalise_term
from engram.resolution.beliefs import BeliefRow, BeliefState
from engram.schemas.claims import Authority, Candidate, RefusalReason, Tense
from engram.schemas.common import Polarity

AUTHORITY_RANK = {Authority.INFERRED: 1, Authority.AFFIRMED: 2, Authority.USER: 3}
PROMOTION_SCOPES = 2


@dataclass(slots=True)
class Create:
    candidate: Candidate
    belief_id: uuid.UUID
    supersedes: tuple[uuid.UUID, ...] = ()
    conflicts_with: tuple[uuid.UUID, ...] = ()


@dataclass(slots=True)
class Reinforce:
    candidate: Candidate
    belief_id: uuid.UUID
    promote_to_user_scope: bool
    origin_scopes: tuple[str, ...]


@dataclass(slots=True)
class Replayed:
    """The same source already produced this belief: nothing changes."""

    candidate: Candidate
    belief_id: uuid.UUID


@dataclass(slots=True)
class ConflictWithHistory:
    """An older-dated claim repeats a value that was already superseded: it is linked, as a
    conflict, to the value that replaced it, instead of reverting to the old value."""

    candidate: Candidate
    past_belief_id: uuid.UUID
    current_belief_id: uuid.UUID


@dataclass(slots=True)
class Rejected:
    candidate: Candidate
    reason: RefusalReason
    detail: str


Decision = Create | Reinforce | Replayed | ConflictWithHistory | Rejected


def resolve(
    candidate: Candidate,
    parts: ContentParts,
    *,
    tenant: str,
    principal: str,
    project: str,
    episode_id: uuid.UUID,
    occurred_at: datetime,
    new_belief_id: Callable[[], uuid.UUID],
    state: BeliefState,
) -> Decision:
    """Decide what ``candidate`` (its content key: ``parts``) does to the beliefs sharing its
    conflict key.

    ``state`` holds the current beliefs of the key and its past values (superseded), and which
    of them this episode already cites. ``new_belief_id`` names the belief a ``Create`` makes;
    it is called only then (most candidates reinforce, and naming costs a SHA-1).
    """
    subject_key, relation, object_key, facet, polarity = parts
    key = (tenant, principal, subject_key, relation, facet)
    past = ended_state(candidate)
    same_object = [b for b in state.with_object(key, object_key) if kept_past(b) == past]
    same_claim = [b for b in same_object if b.polarity == polarity]
    for belief in same_claim:
        if (belief.belief_id, project, episode_id, candidate.message_ordinal) in state.cited:
            return Replayed(candidate, belief.belief_id)
    for belief in same_claim:
        if belief.current:
            return _reinforce(candidate, belief)
    named = _named_relative(candidate, relation, object_key, facet, state.with_key(key))
    if named is not None:
        cited = (named.belief_id, project, episode_id, candidate.message_ordinal) in state.cited
        return Replayed(candidate, named.belief_id) if cited else _reinforce(candidate, named)
    if past:
        # History: a state that has ended supersedes nothing and conflicts with nothing.
        return Create(candidate, new_belief_id())
    exact = [b for b in same_object if b.current]
    if candidate.polarity is Polarity.RETRACT:
        # A retraction supersedes what it retracts and nothing else.
        return Create(candidate, new_belief_id(), supersedes=tuple(b.belief_id for b in exact))
    # An assertion replaces a live retraction of the very same claim.
    supersedes = [b.belief_id for b in exact if b.polarity == Polarity.RETRACT.value]
    if candidate.cardinality == "many":
        supersedes += _unnamed_placeholders(candidate, relation, object_key, facet, state, key)
        return Create(candidate, new_belief_id(), supersedes=tuple(supersedes))
    rivals = [
        b
        for b in state.with_key(key)
        if b.current
        and b.polarity == Polarity.ASSERT.value
        and b.object_key != object_key
        and not kept_past(b)
    ]
    history = [b for b in same_claim if b.superseded]
    return _contradict(candidate, new_belief_id, occurred_at, rivals, supersedes, history)


def ended_state(candidate: Candidate) -> bool:
    """A state told in the past ("I used to be a librarian"): kept as history, with an end."""
    return candidate.tense is Tense.PAST and not candidate.is_event


def kept_past(belief: BeliefRow) -> bool:
    """A belief kept about a state that has ended: current, with an end. A value that was
    replaced is not current; a current value has no end."""
    return belief.current and belief.valid_to is not None


_SEVERAL = frozenset({"child"})
"""Kin told in the plural ("my kids"): the unnamed belief stands for several people, so a
name told later names one of them and replaces none, and "my kids" reinforces no one child."""


def _unnamed(object_key: str, facet: str) -> bool:
    """ "my husband" before any name: (I, related_to, husband, facet husband), the kin word
    standing in for one person (the object key is the end's kind and its normalised name)."""
    return (
        bool(facet)
        and facet not in _SEVERAL
        and object_key.partition(":")[2] == normalise_term(facet)
    )


def _named_relative(
    candidate: Candidate, relation: str, object_key: str, facet: str, beliefs: list[BeliefRow]
) -> BeliefRow | None:
    """The one named relative an unnamed mention means: "my husband" after "my husband Sam" is
    Sam again (a reinforcement of that belief, not a second husband named "husband"). Only when
    exactly one current named relative has that kin: "my sister" among two named sisters says
    which of them nowhere."""
    if (
        relation != "related_to"
        or candidate.polarity is not Polarity.ASSERT
        or not _unnamed(object_key, facet)
    ):
        return None
    named = [
        b
        for b in beliefs
        if b.current and b.polarity == Polarity.ASSERT.value and not _unnamed(b.object_key, b.facet)
    ]
    return named[0] if len(named) == 1 else None


def _unnamed_placeholders(
    candidate: Candidate,
    relation: str,
    object_key: str,
    facet: str,
    state: BeliefState,
    key: tuple[str, str, str, str, str],
) -> list[uuid.UUID]:
    """A name told later attaches to the unnamed belief: "my husband Sam" supersedes "my
    husband" (the same person, now named), so one belief per person stays current."""
    if (
        relation != "related_to"
        or candidate.polarity is not Polarity.ASSERT
        or _unnamed(object_key, facet)
    ):
        return []
    return [
        b.belief_id
        for b in state.with_key(key)
        if b.current and b.polarity == Polarity.ASSERT.value and _unnamed(b.object_key, b.facet)
    ]


def _reinforce(candidate: Candidate, belief: BeliefRow) -> Reinforce:
    scopes = tuple(sorted({*belief.origin_scopes, candidate.scope}))
    promote = (
        belief.scope != "user"
        and belief.portability != "local"
        and len({s for s in scopes if s.startswith("project:")}) >= PROMOTION_SCOPES
    )
    return Reinforce(candidate, belief.belief_id, promote, scopes)


def _contradict(
    candidate: Candidate,
    new_belief_id: Callable[[], uuid.UUID],
    occurred_at: datetime,
    current: list[BeliefRow],
    supersedes: list[uuid.UUID],
    history: list[BeliefRow],
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
        if AUTHORITY_RANK[candidate.authority] >= AUTHORITY_RANK[Authority(belief.authority)]:
            supersedes.append(belief.belief_id)
        else:
            conflicts.append(belief.belief_id)
    return Create(
        candidate, new_belief_id(), supersedes=tuple(supersedes), conflicts_with=tuple(conflicts)
    )
