"""Claims batches: the values of ``engram.claims``, between the formation and belief stages.

The formation agent publishes exactly one batch per episode and policy version, keyed by
tenant/principal. A batch carries what was admitted *and* what was refused, so refusals keep
their words all the way to PostgreSQL. Its identity derives from the episode and the policy
version, which makes redelivery after a rebalance a no-op downstream.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Annotated, Literal
from uuid import UUID

from pydantic import AwareDatetime, Field

from engram.schemas.common import (
    ContractModel,
    Identifier,
    NonNegative,
    Polarity,
    Role,
    SchemaVersionNamed,
)
from engram.schemas.corrections import Correction


class RefusalReason(StrEnum):
    """Why a proposal did not become a candidate. A closed set: seed 003 plus seed 000 gates."""

    # admission checks, in the order they are applied (seed 003)
    UNMAPPED_RELATION = "unmapped_relation"
    UNRESOLVABLE_SUBJECT = "unresolvable_subject"
    UNLOCATABLE_QUOTE = "unlocatable_quote"
    NOT_ASSERTED = "not_asserted"
    NOT_CURRENT = "not_current"
    DUPLICATE_CLAIM = "duplicate_claim"
    # raised by the speaker rule and the belief store (seed 003)
    NOT_SPOKEN_BY_PRINCIPAL = "not_spoken_by_principal"
    ENTITY_NAME_LIMIT = "entity_name_limit"
    CONFLICTING_VALUE = "conflicting_value"
    # eligibility gates (seed 000)
    UNTRUSTED_SOURCE = "untrusted_source"
    SECRET = "secret"
    PII = "pii"
    TRANSIENT = "transient"
    SYSTEM_RESTATEMENT = "system_restatement"
    INSTRUCTION_SHAPED = "instruction_shaped"
    SCOPE_MISMATCH = "scope_mismatch"
    OUT_OF_ORDER = "out_of_order"
    # corrections (seed 000: typed rejections and deletion tombstones survive re-derivation)
    REJECTED_BY_USER = "rejected_by_user"
    TOMBSTONED = "tombstoned"


class EndKind(StrEnum):
    SPEAKER = "speaker"
    """The principal, from a first-person term; only a user message can bind it."""
    PROJECT = "project"
    """The consolidation's project, from "we decided …"; the text is the project id."""
    ENTITY = "entity"
    VALUE = "value"


class Tense(StrEnum):
    PRESENT = "present"
    PAST = "past"


class Authority(StrEnum):
    USER = "user"
    AFFIRMED = "affirmed"
    INFERRED = "inferred"


class Portability(StrEnum):
    PORTABLE = "portable"
    CONTEXTUAL = "contextual"
    LOCAL = "local"


class ClaimEnd(ContractModel):
    """One end of a claim: the principal ("speaker"), a named entity, or a literal value."""

    kind: EndKind
    text: str = Field(min_length=1, max_length=4096)


class SourcePosition(ContractModel):
    topic: str
    partition: NonNegative
    offset: NonNegative


class Candidate(ContractModel):
    """An admitted claim, rendered canonically by local code and cited to its exact words."""

    candidate_id: UUID
    message_ordinal: NonNegative
    role: Role
    subject: ClaimEnd
    relation: str
    object: ClaimEnd
    facet: str | None = None
    polarity: Polarity
    tense: Tense
    statement: str
    quote: str
    span_start: NonNegative = Field(description="Byte offset of the quote in the UTF-8 message.")
    span_end: NonNegative
    belief_type: str
    cardinality: Literal["single", "many"]
    is_event: bool
    authority: Authority
    confidence: float = Field(ge=0.0, le=1.0)
    provisional: bool = Field(description="Below the salience threshold: committed on probation.")
    portability: Portability
    sensitivity: list[str] = Field(default_factory=list)
    flagged_for_review: bool = False
    scope: str
    extractor: str


class Refusal(ContractModel):
    """A refused proposal, with its words: relation verbatim, statement and quote as proposed."""

    refusal_id: UUID
    message_ordinal: NonNegative
    role: Role
    relation: str
    statement: str
    quote: str
    reason: RefusalReason
    detail: str = ""
    extractor: str


class FormationCounts(ContractModel):
    """Every proposal reconciles to exactly one terminal outcome: admitted, refused or overflow."""

    proposed: NonNegative
    admitted: NonNegative
    refused: NonNegative
    overflow: NonNegative
    retracted: NonNegative = 0


class ClaimsBatchHeader(ContractModel):
    """What a claims batch says of itself, formed or sealed (:class:`engram.schemas.sealed.
    SealedClaimsBatch` keeps it in clear): its id, whose episode, where in the log, when, and
    under which policy. Each kind names its own ``type``, in this place among the fields."""

    schema_version: SchemaVersionNamed = Field(
        default=1,
        description="1: `principal` names the principal; 2: it is their pseudonym, and a sealed "
        'batch names the principal only inside `words` (docs/privacy.md, "Who a record is '
        'about").',
    )
    type: str
    batch_id: UUID
    tenant: Identifier
    principal: Identifier
    project: Identifier
    session: Identifier
    episode_id: UUID
    episode_type: str
    trigger: Literal["turn", "explicit", "correction"]
    source: SourcePosition
    occurred_at: AwareDatetime
    policy_version: str


class ClaimsBatchFormed(ClaimsBatchHeader):
    type: Literal["claims.formed"] = "claims.formed"
    candidates: list[Candidate]
    refusals: list[Refusal]
    counts: FormationCounts
    activation_corroborations: int = Field(
        default=1,
        ge=1,
        description="Independent corroborations that make a provisional belief active, from "
        "the policy the batch was formed under (1, the rule before it was a policy setting).",
    )
    correction: Annotated[Correction, Field(discriminator="type")] | None = Field(
        default=None,
        description="For a correction, deletion or forgetting: the event itself; a 'changed' "
        "correction's replacement is the batch's candidate.",
    )


def decode_claims_batch(raw: bytes | str) -> ClaimsBatchFormed:
    return ClaimsBatchFormed.model_validate_json(raw)
