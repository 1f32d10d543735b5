"""What the MCP tools do, for one principal, without MCP: recall, remember, correct, delete.

Each is a thin use of the door every other surface uses — recall (``GET /v1/recall``'s) in the
principal's generation, the intake that ``POST /v1/remember`` appends through, the corrections
service behind ``POST /v1/beliefs/{id}/corrections`` and ``DELETE /v1/beliefs/{id}``, and the
erasure receipts of ``GET /v1/erasures/{id}`` — answering with compact models an agent can read
and cite: a hit is a statement with the exact words it came from, not the whole belief record.
"""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass
from datetime import UTC, datetime

import asyncpg
from pydantic import BaseModel

from engram.generations.reading import reading
from engram.infra.db import create_pool
from engram.infra.settings import Settings
from engram.ingest.intake import Intake
from engram.projections.messages.embeddings.embedder import Embedder
from engram.projections.messages.embeddings.wiring import embedder_from_settings
from engram.projections.reads.recall import OWN_WORDS, recall, semantic_query
from engram.schemas.api import LogPosition, RecalledBelief, RecalledMessage
from engram.schemas.common import Role
from engram.schemas.corrections import CorrectionKind
from engram.schemas.episodes import MemoryRemembered, Message
from engram.schemas.receipts import ErasureReceipt
from engram.sealing.opening import open_sealer
from engram.service.corrections import Corrections
from engram.service.erasures import Erasures

Principal = tuple[str, str]
REMEMBER_SESSION = "mcp"
"""The session an agent's explicit memories are filed under."""


class Quote(BaseModel):
    """Words a belief came from, exactly as said: cite these, not the statement."""

    quote: str
    episode_id: uuid.UUID
    message_ordinal: int
    span_start: int
    span_end: int
    role: str
    occurred_at: datetime


class Recalled(BaseModel):
    """A belief that answers. ``readable`` is the statement in words ("ana lives in Porto");
    ``statement`` is the stored form, kept for agents that match on it."""

    belief_id: uuid.UUID
    statement: str
    readable: str
    relation: str
    object: str
    confidence: float
    corroboration: int
    scope: str
    score: float
    quotes: list[Quote]


class RecalledWords(BaseModel):
    """A message that answers, exactly as said, and where: cite ``event_id`` and
    ``message_ordinal``. ``own_words`` is true only for the person's own (role ``user``)."""

    content: str
    role: str
    own_words: bool
    event_id: uuid.UUID
    message_ordinal: int
    project: str
    session: str
    occurred_at: datetime
    partition: int
    offset: int


class Deletion(BaseModel):
    """A deletion: where it was appended, and its receipt once it applied (``applied``) — what
    went, and where the words still are. Tell the person what ``receipt.says``."""

    applied: bool
    position: LogPosition
    receipt: ErasureReceipt | None


class Recall(BaseModel):
    """Beliefs (``hits``) best first, then the messages that answer, best first; pass
    ``next_cursor`` back as ``cursor`` for more of both (null on the last page)."""

    hits: list[Recalled]
    messages: list[RecalledWords]
    next_cursor: str | None


def _recalled(hit: RecalledBelief) -> Recalled:
    belief = hit.belief
    return Recalled(
        belief_id=belief.belief_id,
        statement=belief.statement,
        readable=belief.readable,
        relation=belief.relation,
        object=belief.object,
        confidence=belief.confidence,
        corroboration=belief.corroboration,
        scope=belief.scope,
        score=round(hit.fused, 6),
        quotes=[Quote.model_validate(e.model_dump()) for e in belief.evidence],
    )


@dataclass(frozen=True)
class AgentMemory:
    """The doors the tools use, shared by every call of one server process."""

    pool: asyncpg.Pool
    intake: Intake
    corrections: Corrections
    erasures: Erasures
    embedder: Embedder | None = None
    """Recall's semantic list, used when its generation is the active one."""

    async def recall(
        self,
        who: Principal,
        query: str,
        *,
        project: str | None,
        limit: int,
        cursor: str | None = None,
        roles: Sequence[Role] = OWN_WORDS,
        semantic: bool = True,
        asked_at: datetime | None = None,
    ) -> Recall:
        """What ``GET /v1/recall`` answers, in the principal's generation: beliefs, then the
        messages of ``roles``; ``semantic=False``: matched by words only; ``asked_at``: when the
        question is asked (default now), which relative times in it are read from."""
        tenant, principal = who
        async with reading(self.pool, principal=who) as conn:
            embedder = self.embedder if semantic else None
            meaning = await semantic_query(conn, embedder, query)
            found = await recall(
                conn,
                tenant=tenant,
                principal=principal,
                query=query,
                project=project,
                roles=roles,
                limit=limit,
                cursor=cursor,
                semantic=meaning,
                asked_at=asked_at,
            )
        return Recall(
            hits=[_recalled(h) for h in found.hits if isinstance(h, RecalledBelief)],
            messages=[
                RecalledWords.model_validate(h.model_dump())
                for h in found.hits
                if isinstance(h, RecalledMessage)
            ],
            next_cursor=found.next_cursor,
        )

    async def remember(self, who: Principal, text: str, *, project: str) -> LogPosition:
        """The principal's own words as a ``memory.remember`` episode, appended through the
        intake exactly as ``POST /v1/remember`` appends it."""
        tenant, principal = who
        episode = MemoryRemembered(
            event_id=uuid.uuid4(),
            tenant=tenant,
            principal=principal,
            project=project,
            session=REMEMBER_SESSION,
            occurred_at=datetime.now(UTC),
            message=Message(ordinal=0, role=Role.USER, content=text),
        )
        [where] = await self.intake.append([episode])
        return where

    async def correct(
        self,
        who: Principal,
        belief_id: uuid.UUID,
        kind: CorrectionKind,
        *,
        replacement: str | None,
        project: str | None,
    ) -> LogPosition:
        tenant, principal = who
        return await self.corrections.correct(
            tenant=tenant,
            principal=principal,
            belief_id=belief_id,
            kind=kind,
            replacement=replacement,
            project=project,
        )

    async def delete(self, who: Principal, belief_id: uuid.UUID, *, wait_s: float) -> Deletion:
        """Delete a belief through the corrections service, then wait up to ``wait_s`` for its
        receipt."""
        tenant, principal = who
        position = await self.corrections.delete(
            tenant=tenant, principal=principal, belief_id=belief_id
        )
        receipt = await self.erasures.receipt(
            event_id=position.event_id, tenant=tenant, principal=principal, timeout_s=wait_s
        )
        return Deletion(applied=receipt is not None, position=position, receipt=receipt)


@asynccontextmanager
async def agent_memory(settings: Settings) -> AsyncIterator[AgentMemory]:
    """One pool and one producer for the life of the server."""
    pool = await create_pool(settings.database, role="engram-mcp")
    sealer = await open_sealer(settings.keys, pool)
    intake = Intake(settings.kafka, sealer)
    try:
        corrections = Corrections(
            pool, settings.kafka, policy_file=settings.formation.policy_file, sealer=sealer
        )
        yield AgentMemory(
            pool,
            intake,
            corrections,
            Erasures(pool, settings.kafka),
            embedder_from_settings(settings.embedding),
        )
    finally:
        await intake.close()
        await pool.close()
