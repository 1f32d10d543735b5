"""What one applied batch changed of the rows that existed before it, so that a late batch
rewinds only the batches after it.

A principal's batches are resolved in canonical order (:mod:`.ordering`). When a batch arrives
that belongs before some already applied, the projection must become what resolving every batch
in that order gives. Resolving the principal again from nothing costs its whole history; instead
the projector undoes only the *suffix* — the applied batches after the late one — and resolves
the late batch and the suffix on top of what is left. Undoing needs, per applied batch, what it
created (deleted on a rewind) and the image of every older row it changed *as it was just
before the batch* (the image from the suffix's first batch that touched a row is the row as the
prefix left it). Resolution records that here, in memory and pure, as it applies each batch; the
store keeps it beside the batch in ``claims_history``.

Only the columns resolution changes are imaged (:data:`MUTABLE_BELIEF_COLUMNS`, an entity's
aliases): everything else is fixed when a row is created. No image holds a statement, a quote or
an object's words; aliases are names the principal already used, deleted with the principal.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import orjson

from engram.resolution.beliefs import MUTABLE_BELIEF_COLUMNS, BeliefRow


@dataclass(slots=True)
class BeliefImage:
    """A belief's changeable columns at one moment; field names are the belief's columns.
    Not frozen: one is taken for every reinforcement, and a frozen dataclass costs several times
    as much to construct; nothing changes an image once taken."""

    belief_id: uuid.UUID
    portability: str
    scope: str
    origin_scopes: list[str]
    confidence: float
    status: str
    corroboration: int
    last_reinforced_at: datetime
    valid_to: datetime | None
    known_to: datetime | None
    superseded_by: uuid.UUID | None
    conflicts_with: list[uuid.UUID]
    flagged_for_review: bool
    excluded_scopes: list[str]

    @classmethod
    def of(cls, belief: BeliefRow) -> BeliefImage:
        # Spelt out rather than looped over the column names: taken for every reinforcement.
        b = belief
        return cls(
            b.belief_id,
            b.portability,
            b.scope,
            list(b.origin_scopes),
            b.confidence,
            b.status,
            b.corroboration,
            b.last_reinforced_at,
            b.valid_to,
            b.known_to,
            b.superseded_by,
            list(b.conflicts_with),
            b.flagged_for_review,
            list(b.excluded_scopes),
        )

    def restore(self, belief: BeliefRow) -> None:
        """Put the image back onto ``belief`` (the in-memory twin of the store's update)."""
        for name in _IMAGED:
            value = getattr(self, name)
            setattr(belief, name, list(value) if isinstance(value, list) else value)


_IMAGED: tuple[str, ...] = MUTABLE_BELIEF_COLUMNS
"""Every column resolution changes (a unit test holds the image's fields to it)."""


@dataclass(slots=True)
class AliasImage:
    entity_id: uuid.UUID
    aliases: list[str]


@dataclass(slots=True)
class BatchUndo:
    """What undoing one applied batch takes: the rows it created and the images, before it, of
    the older rows it changed (each row once: its first change in the batch)."""

    beliefs_created: list[uuid.UUID] = field(default_factory=list)
    entities_created: list[uuid.UUID] = field(default_factory=list)
    beliefs_before: list[BeliefImage] = field(default_factory=list)
    aliases_before: list[AliasImage] = field(default_factory=list)

    def to_json(self) -> bytes:
        # ``default=str``: a loaded belief's ids are asyncpg's own UUID type, which orjson does
        # not know; its text is the same as ``uuid.UUID``'s.
        return orjson.dumps(self, default=str)

    @classmethod
    def from_json(cls, raw: bytes) -> BatchUndo:
        data: dict[str, Any] = orjson.loads(raw)
        return cls(
            beliefs_created=[uuid.UUID(i) for i in data["beliefs_created"]],
            entities_created=[uuid.UUID(i) for i in data["entities_created"]],
            beliefs_before=[_belief_image(image) for image in data["beliefs_before"]],
            aliases_before=[
                AliasImage(uuid.UUID(a["entity_id"]), list(a["aliases"]))
                for a in data["aliases_before"]
            ],
        )


def _belief_image(data: dict[str, Any]) -> BeliefImage:
    def when(value: str | None) -> datetime | None:
        return None if value is None else datetime.fromisoformat(value)

    return BeliefImage(
        belief_id=uuid.UUID(data["belief_id"]),
        portability=data["portability"],
        scope=data["scope"],
        origin_scopes=list(data["origin_scopes"]),
        confidence=float(data["confidence"]),
        status=data["status"],
        corroboration=int(data["corroboration"]),
        last_reinforced_at=datetime.fromisoformat(data["last_reinforced_at"]),
        valid_to=when(data["valid_to"]),
        known_to=when(data["known_to"]),
        superseded_by=None if data["superseded_by"] is None else uuid.UUID(data["superseded_by"]),
        conflicts_with=[uuid.UUID(i) for i in data["conflicts_with"]],
        flagged_for_review=bool(data["flagged_for_review"]),
        excluded_scopes=list(data["excluded_scopes"]),
    )


@dataclass
class SuffixUndo:
    """Undoing a run of consecutive applied batches (a principal's suffix) at once."""

    beliefs_created: set[uuid.UUID] = field(default_factory=set)
    entities_created: set[uuid.UUID] = field(default_factory=set)
    beliefs_before: dict[uuid.UUID, BeliefImage] = field(default_factory=dict)
    """Per older belief the suffix changed: its image before the suffix's first change."""
    aliases_before: dict[uuid.UUID, AliasImage] = field(default_factory=dict)


def undo_suffix(undos: Iterable[BatchUndo]) -> SuffixUndo:
    """Merge the undo records of a suffix, given in canonical order: a row the suffix created
    is deleted, whatever later batches did to it; an older row gets back its earliest image."""
    merged = SuffixUndo()
    for undo in undos:
        merged.beliefs_created.update(undo.beliefs_created)
        merged.entities_created.update(undo.entities_created)
        for image in undo.beliefs_before:
            if image.belief_id not in merged.beliefs_created:
                merged.beliefs_before.setdefault(image.belief_id, image)
        for alias in undo.aliases_before:
            if alias.entity_id not in merged.entities_created:
                merged.aliases_before.setdefault(alias.entity_id, alias)
    return merged
