"""Corrections and forgetting: events on ``engram.episodes`` that Engram appends for a principal.

They are evidence, not edits: ordered in the log with the turns of the project they were made
in, replayed by every re-derivation, and matched to beliefs by content — the SHA-256 of the
normalised content key that resolution uses for duplicates — never by belief id, which a
re-derivation mints anew. Producers cannot write them through ingest; Engram's correction
service does, after checking the belief exists and belongs to the principal.

A deletion and a forgetting carry no words: only hashes and ids, so the log's copy of the
request itself reveals nothing of what was forgotten.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Literal
from uuid import UUID

from pydantic import Field, model_validator

from engram.schemas.common import ContractModel, SchemaVersionNamed, StoredText
from engram.schemas.episodes import EpisodeBase

ContentHash = str
"""64 lower-case hex digits: SHA-256 of a belief's normalised content key."""


class CorrectionKind(StrEnum):
    """What the principal says is wrong (seed 000): three different writes and a flag."""

    UNTRUE = "untrue"
    """It never held: retire it; the same content never forms again unless asserted later."""
    CHANGED = "changed"
    """It held and no longer does: superseded by the replacement, at user authority."""
    NOT_HERE = "not_here"
    """True elsewhere, not in this project: it stops applying here and survives in its origin."""
    UNSPECIFIED = "unspecified"
    """Something is wrong: flag it for review and down-weight it, never retire it."""


class ContentKey(ContractModel):
    """A belief's content as resolution compares it: normalised ends, relation, facet, polarity."""

    subject_key: StoredText = Field(min_length=1, max_length=4200)
    relation: str = Field(min_length=1, max_length=100)
    object_key: StoredText = Field(min_length=1, max_length=4200)
    facet: StoredText = Field(default="", max_length=4200)
    polarity: Literal["assert", "retract"] = "assert"


class BeliefCorrected(EpisodeBase):
    """The principal corrected a belief. ``project`` is where the correction was made."""

    type: Literal["belief.corrected"] = "belief.corrected"
    belief_id: UUID = Field(description="The belief as the principal saw it; ids may change.")
    kind: CorrectionKind
    content: ContentKey
    content_hash: ContentHash = Field(pattern=r"^[0-9a-f]{64}$")
    statement: StoredText = Field(max_length=8192, description="The corrected belief's statement.")
    replacement: StoredText | None = Field(
        default=None, min_length=1, max_length=4096, description="The new value, for 'changed'."
    )

    @model_validator(mode="after")
    def _replacement_only_when_changed(self) -> BeliefCorrected:
        if (self.kind is CorrectionKind.CHANGED) != (self.replacement is not None):
            raise ValueError("a replacement is required for 'changed' and allowed for nothing else")
        return self


class BeliefDeleted(EpisodeBase):
    """The principal asked to delete a belief: its words go from every projection, and only
    the content hash stays, as a tombstone that keeps it from forming again."""

    schema_version: SchemaVersionNamed = Field(  # type: ignore[assignment]  # 2: pseudonymous
        default=1,
        description="1: `principal` names the principal; 2: it is their pseudonym "
        '(docs/privacy.md, "Who a record is about").',
    )
    type: Literal["belief.deleted"] = "belief.deleted"
    belief_id: UUID
    content_hash: ContentHash = Field(pattern=r"^[0-9a-f]{64}$")


class PrincipalForgotten(EpisodeBase):
    """Forget a person: every projected row of the principal goes; a tombstone of the
    principal's hash stays, and nothing of theirs forms again."""

    schema_version: SchemaVersionNamed = Field(  # type: ignore[assignment]  # 2: pseudonymous
        default=1,
        description="1: `principal` names the principal; 2: it is their pseudonym "
        '(docs/privacy.md, "Who a record is about").',
    )
    type: Literal["principal.forgotten"] = "principal.forgotten"


Correction = BeliefCorrected | BeliefDeleted | PrincipalForgotten
