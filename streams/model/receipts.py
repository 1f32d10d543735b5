"""The model arm's tables: answers kept as receipts, the audit of every attempt, and the
session messages that make up the context window.

An answer is keyed by the model's identity (name, endpoint origin), the digest of the request's
fixed part (prompt bytes, the system prompt as rendered for the policy) and the digest of the
exact input (role, redacted message, episode date and context window), per tenant and principal.
A re-derivation that changes only gating, resolution or thresholds finds every answer here and
calls no model. Attempts are kept without content (``model_attempt``: digests, latency, tokens,
status); the session's messages are kept redacted (``session_message``). All three tables live
in ``public``, shared by every generation; forgetting a principal deletes their rows
(``projections/beliefs/forgetting.py``).

The connection is never held across a model call: every method is one short statement.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass
from uuid import UUID

import asyncpg
import orjson

from engram.formation.proposals import Proposal
from engram.infra.db import create_pool
from engram.infra.settings import DatabaseSettings
from engram.schemas.claims import SourcePosition
from engram.schemas.common import Role
from engram.streams.model.attempts import Attempt
from engram.streams.model.context import ContextMessage

_FIND = """
SELECT proposals FROM public.model_receipt
WHERE tenant = $1 AND principal = $2 AND model_name = $3 AND model_origin = $4
  AND prompt_digest = $5 AND input_digest = $6
"""
_KEEP = """
INSERT INTO public.model_receipt (tenant, principal, model_name, model_origin, prompt_digest,
                                  input_digest, proposals, latency_ms)
VALUES ($1, $2, $3, $4, $5, $6, $7::jsonb, $8)
ON CONFLICT DO NOTHING
"""
_ATTEMPT = """
INSERT INTO public.model_attempt (tenant, principal, episode_id, message_ordinal, policy_version,
    model_name, model_origin, prompt_digest, input_digest, attempt, status, failure, http_status,
    prompt_sha256, reply_sha256, latency_ms, prompt_tokens, completion_tokens, total_tokens,
    proposals)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19,
        $20)
"""
_REMEMBER_AND_READ = """
WITH kept AS (
    INSERT INTO public.session_message (tenant, principal, project, session, topic,
                                        log_partition, log_offset, message_ordinal, role, content)
    VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $10, $11)
    ON CONFLICT DO NOTHING
)
SELECT role, content FROM public.session_message
WHERE tenant = $1 AND principal = $2 AND project = $3 AND session = $4 AND topic = $5
  AND log_partition = $6 AND (log_offset, message_ordinal) < ($7, $8)
ORDER BY log_offset DESC, message_ordinal DESC
LIMIT $9
"""

ReceiptKey = tuple[str, str, str, str, str, str]
"""(tenant, principal, model name, model origin, request digest, input digest)."""


@dataclass(frozen=True, slots=True)
class SessionPlace:
    """Where a message sits: its session, and its position in the log."""

    tenant: str
    principal: str
    project: str
    session: str
    source: SourcePosition
    ordinal: int

    def key(self) -> tuple[str, str, str, str, str, int, int, int]:
        return (
            self.tenant,
            self.principal,
            self.project,
            self.session,
            self.source.topic,
            self.source.partition,
            self.source.offset,
            self.ordinal,
        )


@dataclass(frozen=True, slots=True)
class AttemptPlace:
    """What an attempt row names besides the attempt: the message and the policy."""

    tenant: str
    principal: str
    episode_id: UUID
    ordinal: int
    policy_version: str
    receipt: ReceiptKey


class ReceiptStore:
    """The model arm's tables, through a pool of its own opened on first use."""

    def __init__(self, database: DatabaseSettings) -> None:
        self._database = database
        self._pool: asyncpg.Pool | None = None

    async def _db(self) -> asyncpg.Pool:
        if self._pool is None:
            self._pool = await create_pool(self._database, role="engram-receipts")
        return self._pool

    async def close(self) -> None:
        if self._pool is not None:
            await self._pool.close()
            self._pool = None

    async def find(self, key: ReceiptKey) -> list[Proposal] | None:
        raw = await (await self._db()).fetchval(_FIND, *key)
        if raw is None:
            return None
        return [Proposal(**item) for item in orjson.loads(raw)]

    async def keep(self, key: ReceiptKey, proposals: list[Proposal], latency_s: float) -> None:
        body = orjson.dumps([asdict(p) for p in proposals]).decode()
        await (await self._db()).execute(_KEEP, *key, body, latency_s * 1000)

    async def record_attempt(self, place: AttemptPlace, attempt: Attempt) -> None:
        _, _, name, origin, request, input_digest = place.receipt
        latency_ms = attempt.latency_s * 1000 if attempt.latency_s is not None else None
        await (await self._db()).execute(
            _ATTEMPT,
            place.tenant,
            place.principal,
            place.episode_id,
            place.ordinal,
            place.policy_version,
            name,
            origin,
            request,
            input_digest,
            attempt.number,
            attempt.status,
            attempt.failure,
            attempt.http_status,
            attempt.prompt_sha256,
            attempt.reply_sha256,
            latency_ms,
            attempt.prompt_tokens,
            attempt.completion_tokens,
            attempt.total_tokens,
            attempt.proposals,
        )

    async def remember_and_read(
        self, place: SessionPlace, message: ContextMessage, limit: int
    ) -> list[ContextMessage]:
        """Keep one (redacted) message of a session at its log position (idempotent) and read
        the session's newest ``limit`` messages strictly before it, oldest first — in one
        statement, so the window costs one round trip. The read does not see the row being
        kept, and needs not: it is at ``place``, not before it."""
        rows: Sequence[asyncpg.Record] = await (await self._db()).fetch(
            _REMEMBER_AND_READ, *place.key(), limit, message.role.value, message.content
        )
        return [ContextMessage(Role(row["role"]), row["content"]) for row in reversed(rows)]
