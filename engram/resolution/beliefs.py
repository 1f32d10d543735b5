"""What resolution reads and writes: the belief projection's rows, as plain values.

The projector loads the rows a chunk of claims batches can touch into a :class:`BeliefState`,
:mod:`.resolution` decides every change in memory, and the store writes the rows it is handed
without deciding anything. A row here is a whole row of its table, so the store can write it
with one set-based statement per table, and a test can check a decision without a database.

The rows resolution makes for every candidate or batch (evidence, refusals, runs, formed
episodes) are plain slotted dataclasses, not frozen ones: a frozen dataclass sets each field
through ``object.__setattr__``, which made constructing an evidence row about four times as
costly, and nothing changes a row once it is handed to the store.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime

from engram.schemas.memory_events import MemoryChanged

ConflictKey = tuple[str, str, str, str, str]
"""(tenant, principal, subject key, relation, facet): beliefs that can contradict each other."""


@dataclass(slots=True)
class BeliefRow:
    """One row of ``belief``. The fields after ``facet`` that resolution changes are mutable."""

    belief_id: uuid.UUID
    tenant: str
    principal: str
    subject_kind: str
    subject_entity_id: uuid.UUID | None
    subject_key: str
    relation: str
    object_kind: str
    object_entity_id: uuid.UUID | None
    object_text: str
    object_key: str
    facet: str
    content_hash: str
    statement: str
    belief_type: str
    polarity: str
    authority: str
    sensitivity: list[str]
    is_single: bool
    valid_from: datetime
    known_from: datetime
    supersedes: uuid.UUID | None
    formation_run: uuid.UUID
    policy_version: str
    role: str
    # changed by resolution
    portability: str
    scope: str
    origin_scopes: list[str]
    confidence: float
    status: str
    corroboration: int
    last_reinforced_at: datetime
    valid_to: datetime | None = None
    known_to: datetime | None = None
    superseded_by: uuid.UUID | None = None
    conflicts_with: list[uuid.UUID] = field(default_factory=list)
    flagged_for_review: bool = False
    excluded_scopes: list[str] = field(default_factory=list)
    """Projects where the principal said it does not apply (``not_here``)."""

    @property
    def conflict_key(self) -> ConflictKey:
        return (self.tenant, self.principal, self.subject_key, self.relation, self.facet)

    @property
    def superseded(self) -> bool:
        return self.status == "superseded"

    @property
    def current(self) -> bool:
        return self.status in ("active", "provisional")


MUTABLE_BELIEF_COLUMNS: tuple[str, ...] = (
    "portability",
    "scope",
    "origin_scopes",
    "confidence",
    "status",
    "corroboration",
    "last_reinforced_at",
    "valid_to",
    "known_to",
    "superseded_by",
    "conflicts_with",
    "flagged_for_review",
    "excluded_scopes",
)
"""The columns an update of an existing belief writes; everything else is fixed at insert."""


@dataclass(slots=True)
class EntityRow:
    entity_id: uuid.UUID
    tenant: str
    principal: str
    normalized_name: str
    canonical_name: str
    aliases: list[str] = field(default_factory=list)


@dataclass(slots=True)
class EvidenceRow:
    evidence_id: uuid.UUID
    belief_id: uuid.UUID
    tenant: str
    principal: str
    project: str
    session: str
    episode_id: uuid.UUID
    source_topic: str
    source_partition: int
    source_offset: int
    message_ordinal: int
    role: str
    quote: str
    span_start: int
    span_end: int
    extractor: str
    run_id: uuid.UUID
    occurred_at: datetime


Cited = tuple[uuid.UUID, str, uuid.UUID, int]
"""(belief, project, episode, message ordinal): what one evidence row cites."""


@dataclass(slots=True)
class RefusalRow:
    refusal_id: uuid.UUID
    run_id: uuid.UUID
    tenant: str
    principal: str
    project: str
    episode_id: uuid.UUID
    message_ordinal: int
    role: str
    relation: str
    statement: str
    quote: str
    reason: str
    detail: str
    extractor: str
    policy_version: str
    occurred_at: datetime


@dataclass(slots=True)
class RunRow:
    run_id: uuid.UUID
    tenant: str
    principal: str
    project: str
    session: str
    episode_id: uuid.UUID
    trigger: str
    scope: str
    policy_version: str
    source_topic: str
    source_partition: int
    source_offset: int
    occurred_at: datetime
    proposed: int
    admitted: int
    committed: int
    reinforced: int
    superseded: int
    conflicted: int
    refused: int
    overflow: int
    retracted: int
    refusal_reasons: str
    """JSON object of refusal counts by reason, keys sorted."""


@dataclass(frozen=True, slots=True)
class RejectionRow:
    """A correction, kept by content: ``belief_rejection``. Its words go when the content is
    deleted; the hash and the kind stay."""

    rejection_id: uuid.UUID
    tenant: str
    principal: str
    content_hash: str
    kind: str
    subject_key: str | None
    relation: str
    object_key: str | None
    facet: str | None
    polarity: str
    statement: str | None
    replacement: str | None
    scope: str
    belief_id: uuid.UUID
    correcting_event: uuid.UUID
    run_id: uuid.UUID
    occurred_at: datetime


@dataclass(frozen=True, slots=True)
class TombstoneRow:
    """A deleted belief: ``belief_tombstone``, its hash and ids, never its words."""

    tenant: str
    principal: str
    content_hash: str
    belief_id: uuid.UUID
    event_id: uuid.UUID
    deleted_at: datetime


@dataclass(frozen=True, slots=True)
class PrincipalTombstoneRow:
    """A forgotten principal's tombstone. Resolution names the forgetting's event and time;
    the store keeps only the hash and the day (``projections.beliefs.store.kept_of``): the
    forgetting's record on the log names their pseudonym, and its id or exact time beside the
    hash would name that record."""

    principal_hash: str
    event_id: uuid.UUID | None
    forgotten_at: datetime


@dataclass(slots=True)
class EpisodeFormed:
    """A backlog entry to mark formed: the episode's position in the episodic log."""

    topic: str
    partition: int
    offset: int


class BeliefState:
    """The rows resolution may consult for one chunk, indexed the ways it looks them up.

    Loaded by the store, then changed in place as a chunk is resolved, so a later batch of the
    chunk sees what an earlier one decided. ``cited`` holds (belief, project, episode, message
    ordinal) for the chunk's episodes only: all a same-source replay is compared against (an
    event id is an episode's only within its tenant, principal and project; a belief is one
    principal's already).
    """

    def __init__(
        self,
        beliefs: Iterable[BeliefRow] = (),
        *,
        entities: Iterable[EntityRow] = (),
        cited: Iterable[Cited] = (),
        applied_runs: Iterable[uuid.UUID] = (),
        rejections: Iterable[RejectionRow] = (),
        tombstones: Iterable[tuple[str, str, str]] = (),
        forgotten: Iterable[str] = (),
    ) -> None:
        self.beliefs: dict[uuid.UUID, BeliefRow] = {}
        self._by_key: dict[ConflictKey, list[BeliefRow]] = {}
        self._by_object: dict[tuple[ConflictKey, str], list[BeliefRow]] = {}
        for belief in sorted(beliefs, key=lambda b: (b.valid_from, b.belief_id)):
            self.add(belief)
        self.entities: dict[tuple[str, str, str], EntityRow] = {
            (e.tenant, e.principal, e.normalized_name): e for e in entities
        }
        self.cited: set[Cited] = set(cited)
        self.applied_runs: set[uuid.UUID] = set(applied_runs)
        self.rejections: dict[tuple[str, str, str], list[RejectionRow]] = {}
        for rejection in sorted(rejections, key=lambda r: (r.occurred_at, r.rejection_id)):
            self.reject(rejection)
        self.tombstones: set[tuple[str, str, str]] = set(tombstones)
        """(tenant, principal, content hash) of deleted content."""
        self.forgotten: set[str] = set(forgotten)
        """Principal hashes of forgotten principals."""
        self.deleting: dict[tuple[str, str, str], list[uuid.UUID]] = {}
        """(tenant, principal, content hash) of content the chunk deletes → the ids of its
        belief rows as they stood before the chunk: a deletion resolves the principal again
        from batches without the deleted words, so those rows are never in the state, yet
        each is announced as ``memory.deleted`` (the store reads them before it undoes)."""

    def add(self, belief: BeliefRow) -> None:
        self.beliefs[belief.belief_id] = belief
        self._by_key.setdefault(belief.conflict_key, []).append(belief)
        self._by_object.setdefault((belief.conflict_key, belief.object_key), []).append(belief)

    def remove(self, belief: BeliefRow) -> None:
        self.beliefs.pop(belief.belief_id, None)
        for same in (
            self._by_key.get(belief.conflict_key, []),
            self._by_object.get((belief.conflict_key, belief.object_key), []),
        ):
            if belief in same:
                same.remove(belief)

    def with_content(self, tenant: str, principal: str, content_hash: str) -> list[BeliefRow]:
        return [
            b
            for b in self.beliefs.values()
            if (b.tenant, b.principal, b.content_hash) == (tenant, principal, content_hash)
        ]

    def reject(self, rejection: RejectionRow) -> None:
        key = (rejection.tenant, rejection.principal, rejection.content_hash)
        self.rejections.setdefault(key, []).append(rejection)

    def rejections_of(self, tenant: str, principal: str, content_hash: str) -> list[RejectionRow]:
        return self.rejections.get((tenant, principal, content_hash), [])

    def with_key(self, key: ConflictKey) -> list[BeliefRow]:
        """Beliefs of one conflict key, in (valid_from, id) order: current and past values."""
        return self._by_key.get(key, [])

    def with_object(self, key: ConflictKey, object_key: str) -> list[BeliefRow]:
        """The beliefs of ``with_key`` with one object, in the same order: what a claim of a
        multi-valued relation is compared with, without scanning the key's other values (a
        chunk adds hundreds to a key like "uses")."""
        return self._by_object.get((key, object_key), [])


@dataclass
class Changes:
    """Everything a chunk's resolution writes, per table, in the order the store applies it."""

    runs: list[RunRow] = field(default_factory=list)
    entities_new: dict[uuid.UUID, EntityRow] = field(default_factory=dict)
    entities_changed: dict[uuid.UUID, EntityRow] = field(default_factory=dict)
    beliefs_new: dict[uuid.UUID, BeliefRow] = field(default_factory=dict)
    beliefs_changed: dict[uuid.UUID, BeliefRow] = field(default_factory=dict)
    evidence: list[EvidenceRow] = field(default_factory=list)
    refusals: list[RefusalRow] = field(default_factory=list)
    memory_events: list[MemoryChanged] = field(default_factory=list)
    formed: list[EpisodeFormed] = field(default_factory=list)
    rejections: list[RejectionRow] = field(default_factory=list)
    tombstones: list[TombstoneRow] = field(default_factory=list)
    principal_tombstones: list[PrincipalTombstoneRow] = field(default_factory=list)
    forgotten: list[tuple[str, str]] = field(default_factory=list)
    """(tenant, principal) whose every projected row goes, after this chunk's other writes."""

    def belief_changed(self, belief: BeliefRow) -> None:
        """Record that ``belief`` was changed; a belief new in this chunk is written once,
        in its final state, with the inserts."""
        if belief.belief_id not in self.beliefs_new:
            self.beliefs_changed[belief.belief_id] = belief

    def entity_changed(self, entity: EntityRow) -> None:
        if entity.entity_id not in self.entities_new:
            self.entities_changed[entity.entity_id] = entity
