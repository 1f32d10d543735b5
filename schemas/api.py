"""The HTTP contract: request and response models of the API (``schemas/openapi.json``).

These are wire models too — the server answers with them and the client (``engram.client``)
decodes with them — but they are not events: they are separate from the models in
``episodes``/``corrections`` even where they look alike, so neither contract changes by accident
when the other does. They import nothing of Engram's but the event models a request carries.
"""

from __future__ import annotations

import uuid
from datetime import datetime
from enum import StrEnum
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Discriminator, Field, Tag, field_validator

from engram.schemas.common import EventId, EventTime, Identifier, Role, StoredText
from engram.schemas.corrections import CorrectionKind
from engram.schemas.episodes import MemoryRemembered, Message, TurnAppended
from engram.schemas.webhooks import NotificationType

MAX_TURNS_PER_REQUEST = 500


class RequestModel(BaseModel):
    """Base of every request body: a field the contract does not have is a 422 naming it (a
    misspelt ``projet`` silently dropped would apply the request somewhere else), and the
    OpenAPI document says ``additionalProperties: false``. Response models stay open, so a
    client keeps reading an answer that gained a field."""

    model_config = ConfigDict(extra="forbid")


class TurnsBatch(RequestModel):
    """Several episodes in one request: validated whole before any is appended."""

    turns: list[Annotated[TurnAppended | MemoryRemembered, Field(discriminator="type")]] = Field(
        min_length=1, max_length=MAX_TURNS_PER_REQUEST
    )


def _shape(value: Any) -> str | None:
    """Which shape a ``POST /v1/turns`` body has: a batch, or one episode by its ``type``.

    Any other ``type`` (a correction, which only Engram appends) matches no tag: 422."""
    if isinstance(value, dict):
        return "batch" if "turns" in value else value.get("type")
    return "batch" if isinstance(value, TurnsBatch) else getattr(value, "type", None)


TurnsRequest = Annotated[
    Annotated[TurnsBatch, Tag("batch")]
    | Annotated[TurnAppended, Tag("turn.appended")]
    | Annotated[MemoryRemembered, Tag("memory.remember")],
    Discriminator(
        _shape,
        custom_error_type="episode_type",
        custom_error_message="expected one episode of type 'turn.appended' or 'memory.remember' "
        '(corrections are appended by Engram only), or {"turns": [...]}',
    ),
]
"""The body of ``POST /v1/turns``: one episode, or ``{"turns": [...]}``."""


class RememberedMessage(Message):
    """The message of an explicit memory: only the principal's own words can be remembered as
    the principal's memory, so its role is ``user`` (formation takes no other speaker's words as
    theirs, so another role would be accepted and form nothing)."""

    role: Literal[Role.USER] = Field(
        description="Always 'user': the principal's own words. Send what others said as a turn."
    )

    @field_validator("role", mode="before")
    @classmethod
    def _the_principals_own_words(cls, role: object) -> object:
        if role != Role.USER:
            raise ValueError(
                f"must be 'user', not {role!r}: only the principal's own words can be remembered "
                "as their memory; send what others said as a turn (POST /v1/turns)"
            )
        return role


class RememberRequest(RequestModel):
    """An explicit memory, without the envelope: the server fills in ``type`` and
    ``schema_version``, and the tenant and principal from a principal's token when left out;
    the caller still chooses ``event_id``, the episode's identity."""

    event_id: EventId
    tenant: Identifier | None = None
    principal: Identifier | None = None
    project: Identifier
    session: Identifier
    occurred_at: EventTime
    message: RememberedMessage


class LogPosition(BaseModel):
    """Where an event landed in the episodic log; wait on ``/v1/freshness`` for ``offset``."""

    # The one type for a log position: what the producer returns (``engram.ingest.producer``), what
    # the service's writes return, what the API and the MCP tools answer, what the client
    # decodes and what ``watermarks.waiting.wait_for_watermarks`` waits on. Frozen: a value.
    model_config = ConfigDict(frozen=True)

    event_id: uuid.UUID
    tenant: str
    project: str
    partition: int
    offset: int


class TurnsAccepted(BaseModel):
    """Every appended episode's log position, in request order."""

    appended: list[LogPosition]


class CorrectionRequest(RequestModel):
    kind: CorrectionKind
    replacement: StoredText | None = Field(default=None, min_length=1, max_length=4096)
    project: Identifier | None = None


class EvidenceView(BaseModel):
    episode_id: uuid.UUID
    message_ordinal: int
    role: str
    quote: str
    span_start: int
    span_end: int
    extractor: str
    source_partition: int
    source_offset: int
    occurred_at: datetime


BeliefStatus = Literal["provisional", "active", "superseded", "expired", "retired", "retracted"]


class BeliefView(BaseModel):
    belief_id: uuid.UUID
    statement: str
    readable: str = Field(
        description="The statement as a person reads it: the principal by name, the relation "
        'in words ("ana lives in Lisbon"). ``statement`` is the canonical text formation '
        "keeps."
    )
    subject: str
    relation: str
    object: str
    facet: str | None
    belief_type: str
    polarity: str
    authority: str
    scope: str
    origin_scopes: list[str]
    portability: str
    sensitivity: list[str]
    confidence: float = Field(description="As the evidence earned it, stored.")
    effective_confidence: float = Field(
        description="The stored confidence decayed to the time of reading (or to as_of) by the "
        "half-life of the belief's type since its last reinforcement, not below the policy's "
        "floor; 0 for a transient state past its expiry. What min_confidence filters on."
    )
    last_reinforced_at: datetime
    status: str
    corroboration: int
    valid_from: datetime
    valid_to: datetime | None
    known_from: datetime
    known_to: datetime | None
    superseded_by: uuid.UUID | None
    conflicts_with: list[uuid.UUID]
    flagged_for_review: bool
    excluded_scopes: list[str]
    policy_version: str
    content_hash: str | None
    evidence: list[EvidenceView]


class CorrectionView(BaseModel):
    """A correction of this content: what was said, when, where; the words go on deletion."""

    kind: str
    scope: str
    statement: str | None
    replacement: str | None
    belief_id: uuid.UUID
    correcting_event: uuid.UUID
    occurred_at: datetime


class RunCounts(BaseModel):
    """What one consolidation did: every proposal is admitted, refused or overflow."""

    proposed: int
    admitted: int
    committed: int
    reinforced: int
    superseded: int
    conflicted: int
    refused: int
    overflow: int
    retracted: int


class RunView(BaseModel):
    """One formation run (a consolidation of one episode): its policy, source and counts."""

    run_id: uuid.UUID
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
    counts: RunCounts
    refusal_reasons: dict[str, int]


class BeliefDetail(BaseModel):
    """One belief with all its evidence, its history — every value in its supersession chain
    and every belief of the same content — the corrections of its content, and the run that
    formed it."""

    belief: BeliefView
    history: list[BeliefView]
    history_truncated: bool = Field(
        default=False,
        description="The supersession chain goes on past the ten values each way shown here.",
    )
    corrections: list[CorrectionView]
    formed_by: RunView | None = Field(
        description="The run that formed it (None once that run's rows were forgotten)."
    )


class BeliefPage(BaseModel):
    """One page of beliefs; pass ``next_cursor`` back as ``cursor`` for the next (None: done)."""

    items: list[BeliefView]
    next_cursor: str | None


class EpisodeProgress(BaseModel):
    """What became of an episode in the formation backlog: metadata only, never its words."""

    state: str = Field(description="pending, requeued, formed or parked.")
    attempts: int
    failure_kind: str | None
    appended_at: datetime
    formed_at: datetime | None
    parked_at: datetime | None


class BeliefBrief(BaseModel):
    belief_id: uuid.UUID
    statement: str
    relation: str
    status: str
    confidence: float


class RunDetail(BaseModel):
    """A run with what it formed and reinforced, what it refused (with their words: they are
    the caller's own), its episode's progress and the project's watermark now."""

    run: RunView
    progress: EpisodeProgress | None
    formed: list[BeliefBrief]
    reinforced: list[BeliefBrief]
    refusals: list[RefusalView]
    freshness: Freshness


class RunPage(BaseModel):
    items: list[RunView]
    next_cursor: str | None


class RefusalPage(BaseModel):
    items: list[RefusalView]
    next_cursor: str | None


class CountOf(BaseModel):
    key: str
    count: int


class RefusalSummary(BaseModel):
    """How many refusals, by reason and, for ``unmapped_relation``, by the relation proposed
    (what the vocabulary is missing), most frequent first."""

    total: int
    by_reason: list[CountOf]
    by_unmapped_relation: list[CountOf]


class RefusalBrief(BaseModel):
    """A refusal without its words: why, and which message of which episode."""

    refusal_id: uuid.UUID
    episode_id: uuid.UUID
    message_ordinal: int
    role: str
    relation: str
    reason: str


class EpisodeDiagnosis(BaseModel):
    """One episode of a session: where it is in the log, what became of it, what its run did."""

    episode_id: uuid.UUID
    project: str
    occurred_at: datetime
    partition: int | None
    offset: int | None
    progress: EpisodeProgress | None
    run_id: uuid.UUID | None
    policy_version: str | None
    counts: RunCounts | None


class FormedInSession(BaseModel):
    """A belief this session formed or reinforced, with the evidence it found in this session."""

    belief_id: uuid.UUID
    statement: str
    relation: str
    status: str
    confidence: float
    evidence: list[EvidenceView]


class SessionDiagnosis(BaseModel):
    """Why a session formed what it formed: its episodes (attempts, parking), the beliefs with
    their evidence quotes, and what was refused and why — never the messages themselves."""

    session: str
    episodes: list[EpisodeDiagnosis]
    formed: list[FormedInSession]
    refused: list[RefusalBrief]
    refused_by_reason: list[CountOf]
    parked: int


class UserModelEntry(BaseModel):
    belief_id: uuid.UUID
    relation: str
    facet: str | None
    belief_type: str
    value: str
    statement: str
    confidence: float
    corroboration: int
    origin_scopes: list[str]
    valid_from: datetime
    flagged_for_review: bool


class UserModel(BaseModel):
    """What holds about the person everywhere: active, user-scope attributes and preferences
    stated by them (seed 000's user model), most corroborated first."""

    tenant: str
    principal: str
    entries: list[UserModelEntry]
    truncated: bool = Field(description="More entries exist than the limit returned.")


class RefusalView(BaseModel):
    refusal_id: uuid.UUID
    episode_id: uuid.UUID
    message_ordinal: int
    role: str
    relation: str
    statement: str
    readable: str = Field(
        description="The proposed statement as a person reads it, where it names its relation "
        '("ana lives in Moscow"); otherwise the proposed words unchanged.'
    )
    quote: str
    reason: str
    detail: str
    extractor: str
    policy_version: str
    occurred_at: datetime


PROJECT_UNKNOWN = "nothing is known of project"
"""How the 404 of ``/v1/freshness?wait_for_offset=`` for a project of which formation has read
no episode begins its ``detail``: the client's ``wait_formed``, whose position comes from an
append, reads it as "not read yet" and asks again until its own deadline."""


class NotificationFreshness(BaseModel):
    """How far the project's webhook endpoints have been told (docs/notifications.md)."""

    endpoints: int = Field(description="The project's endpoints that are enabled.")
    disabled: int = Field(description="The project's endpoints disabled after failing.")
    pending: int = Field(description="Deliveries owed to the project's endpoints, not yet made.")
    parked: int = Field(description="Deliveries that failed for good (`engram webhooks retry`).")
    lag_seconds: float = Field(
        description="How long the oldest owed delivery has waited (0 when none waits)."
    )


class Freshness(BaseModel):
    tenant: str
    project: str
    log_offset: int | None
    formed_offset: int | None
    lag_episodes: int
    lag_seconds: float
    parked: int
    policy_version: str | None
    indexed_offset: int | None = Field(
        default=None,
        description="The last of the project's episodes (log offset) whose messages are in the "
        "index recall searches; the message indexer's own watermark, apart from formation's.",
    )
    index_lag_episodes: int = Field(
        default=0, description="The project's episodes on the log the index has not read yet."
    )
    embedding_generation: str | None = Field(
        default=None,
        description="The active embedding generation (model/size/recipe) recall's semantic "
        "list reads; null when none is active (recall is then lexical only).",
    )
    embedded_offset: int | None = Field(
        default=None,
        description="The last of the project's episodes (log offset) whose messages have "
        "vectors in the active embedding generation; the embedding follower's own watermark.",
    )
    embedding_lag_episodes: int = Field(
        default=0,
        description="The project's episodes on the log the active embedding generation has "
        "not embedded yet (0 when none is active).",
    )
    notifications: NotificationFreshness | None = Field(
        default=None,
        description="Webhook deliveries to the project's endpoints; null when it has none.",
    )


class Problem(BaseModel):
    """Every error answer: ``detail`` says what is wrong (a list of field errors for a 422)."""

    detail: Any


class SearchMode(StrEnum):
    """How a search query is read. ``any``: a question in plain words, every word a term of its
    own, hits ranked by how many distinct terms they match (stop words, question words and the
    principal's own name carry no weight). ``all``: web-search syntax (``"a phrase"``, ``or``,
    ``-word``), every word must match."""

    ANY = "any"
    ALL = "all"


class SearchHit(BaseModel):
    """One belief that matched a search, with its evidence, and why it ranks where it does:
    ``relevance`` is the text match alone (0-1), ``score`` the documented combination with
    confidence, corroboration and recency; in mode ``any`` results are ordered by
    ``matched_terms`` (how many distinct query terms the belief matches), then ``score``; in
    mode ``all`` by ``score``, and ``matched_terms`` is null."""

    score: float
    relevance: float
    matched_terms: int | None = None
    belief: BeliefView


class SearchResults(BaseModel):
    """One page of hits, best first; pass ``next_cursor`` as ``cursor`` for the next page
    (null on the last)."""

    hits: list[SearchHit]
    next_cursor: str | None


class RecalledBelief(BaseModel):
    """A belief that answers: what is believed, with the quotes (``belief.evidence``) it came
    from. ``fused`` is its reciprocal-rank-fusion score over the ranked lists recall combined
    (today the lexical one; ``lexical_rank`` is its place there, from 1)."""

    kind: Literal["belief"] = "belief"
    fused: float
    lexical_rank: int | None
    belief: BeliefView


class RecalledMessage(BaseModel):
    """A message that answers, as it was said: the turn's ``event_id`` and the message's
    ``message_ordinal`` in it, who said it (``role``; ``own_words`` is true only for the
    principal's own, role ``user``), where (project, session), when (``occurred_at``, the
    turn's event time) and its position in the log (partition, offset)."""

    kind: Literal["message"] = "message"
    fused: float
    lexical_rank: int | None = Field(description="Its place among the messages that match q.")
    quoted_rank: int | None = Field(
        description="Its place among the messages the recalled beliefs quote, if one does."
    )
    semantic_rank: int | None = Field(
        default=None,
        description="Its place among the principal's messages nearest q by meaning, in the "
        "active embedding generation (null when it is not among them or none is active).",
    )
    event_id: uuid.UUID
    message_ordinal: int
    role: Role
    own_words: bool
    author: str | None
    project: str
    session: str
    occurred_at: datetime
    partition: int
    offset: int
    content: str


RecallHit = Annotated[RecalledBelief | RecalledMessage, Field(discriminator="kind")]


class Whoami(BaseModel):
    """Whom a request acts for: the token's tenant and principal (an operator's token names the
    principal in the query). What an adapter builds its episodes with, so it appends only as
    the person its token names."""

    tenant: str
    principal: str


class SessionMessage(BaseModel):
    """One message of a conversation as the message index holds it: the turn's ``event_id`` and
    the message's ``message_ordinal`` in it, who said it (``role``, ``author``), when (the turn's
    ``occurred_at``) and where in the log (partition, offset). A message a deleted belief quoted,
    or any message of a forgotten principal, is not held, so it is not here."""

    event_id: uuid.UUID
    message_ordinal: int
    role: Role
    author: str | None
    project: str
    session: str
    occurred_at: datetime
    partition: int
    offset: int
    content: str


class SessionMessagePage(BaseModel):
    """A conversation's messages in the order they were said (event time, then log position,
    then ordinal); pass ``next_cursor`` back as ``cursor`` for the next page."""

    items: list[SessionMessage]
    next_cursor: str | None


class RecallResults(BaseModel):
    """One page of what answers a question: every belief hit before every message hit, each
    best first; ``next_cursor`` fetches the next page (null on the last). ``reflects`` is the
    freshness of each project the page's hits come from: what formation (``formed_offset``)
    and the message index (``indexed_offset``) had reached when the answer was read."""

    hits: list[RecallHit]
    next_cursor: str | None
    reflects: list[Freshness]


class WebhookRegistration(RequestModel):
    """``POST /v1/webhooks``: an endpoint for one project of the token's tenant."""

    project: Identifier
    url: str = Field(
        min_length=1,
        max_length=2048,
        description="https, to a public address, unless the origin is allow-listed "
        "(ENGRAM_WEBHOOKS_ALLOWLIST); no credentials in it.",
    )
    events: list[NotificationType] | None = Field(
        default=None,
        min_length=1,
        description="What to send; every kind when left out.",
    )


class WebhookEndpoint(BaseModel):
    """An endpoint as listed: never its secret."""

    id: uuid.UUID
    tenant: str
    project: str
    url: str
    events: list[str]
    created_at: datetime
    disabled_at: datetime | None = None
    disabled_reason: str | None = None
    secrets: int = Field(description="Secrets deliveries are signed with now (2 while rotating).")


class WebhookCreated(WebhookEndpoint):
    """The endpoint just registered, with its signing secret: shown this once."""

    secret: str = Field(description="whsec_…: verify the webhook-signature header with it.")


class WebhookSecretRotated(BaseModel):
    id: uuid.UUID
    secret: str = Field(description="The new whsec_… secret: shown this once.")
    previous_valid_until: datetime | None = Field(
        description="Until when deliveries are also signed with the previous secret."
    )


class WebhookEndpoints(BaseModel):
    items: list[WebhookEndpoint]


class WebhookDelivery(BaseModel):
    """One notification owed to one endpoint: metadata only (the body holds ids, no words)."""

    id: uuid.UUID = Field(description="The webhook-id header of every attempt.")
    endpoint_id: uuid.UUID
    project: str
    type: str
    event_id: uuid.UUID
    state: Literal["pending", "delivered", "parked"]
    attempts: int
    next_attempt_at: datetime | None
    last_status: int | None
    last_error: str | None
    created_at: datetime
    delivered_at: datetime | None
    parked_at: datetime | None


class WebhookDeliveries(BaseModel):
    items: list[WebhookDelivery]
