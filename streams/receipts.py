"""Model-answer receipts: every model answer kept, and looked up before the model is asked.

An answer is keyed by the model's identity (name, endpoint origin), the digest of the request's
fixed part (prompt bytes, the system prompt as rendered for the policy) and the digest of the
exact input (role and redacted message), per tenant and principal. A re-derivation that
changes only gating, resolution or thresholds finds every answer here and calls no model.
The table is ``public.model_receipt``, shared by every generation; forgetting a principal
deletes theirs (``projections/forgetting.py``).

What is kept is the decoded answer — the proposals — with the call's latency. The connection
is never held across the model call: look up, release, call, then store.
"""

from __future__ import annotations

import time
from dataclasses import asdict

import asyncpg
import orjson

from engram.shared.db import create_pool
from engram.shared.metrics import MODEL_LATENCY, MODEL_RECEIPTS
from engram.shared.settings import DatabaseSettings
from formation.proposals import Proposal
from schemas.episodes import Message
from streams.formation_stage import ModelArm, Owner
from streams.model_extractor import ModelExtractor

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


class ReceiptStore:
    """The receipts table, through a pool of its own opened on first use."""

    def __init__(self, database: DatabaseSettings) -> None:
        self._database = database
        self._pool: asyncpg.Pool | None = None

    async def _db(self) -> asyncpg.Pool:
        if self._pool is None:
            self._pool = await create_pool(self._database, role="engram-receipts")
        return self._pool

    async def find(self, key: tuple[str, ...]) -> list[Proposal] | None:
        raw = await (await self._db()).fetchval(_FIND, *key)
        if raw is None:
            return None
        return [Proposal(**item) for item in orjson.loads(raw)]

    async def keep(self, key: tuple[str, ...], proposals: list[Proposal], latency_s: float) -> None:
        body = orjson.dumps([asdict(p) for p in proposals]).decode()
        await (await self._db()).execute(_KEEP, *key, body, latency_s * 1000)


def receipted(extractor: ModelExtractor, store: ReceiptStore) -> ModelArm:
    """The extractor's arm, answering from a receipt when one exists and keeping every new
    answer; hits and misses are counted in ``engram_model_receipts``, and each model call's
    latency is observed in the model latency histogram."""
    name, origin = extractor.identity
    request = extractor.request_digest

    async def propose(owner: Owner, message: Message) -> list[Proposal]:
        key = (*owner, name, origin, request, extractor.input_digest(message))
        found = await store.find(key)
        if found is not None:
            MODEL_RECEIPTS.labels("hit").inc()
            return found
        MODEL_RECEIPTS.labels("miss").inc()
        started = time.perf_counter()
        try:
            proposals = await extractor.propose(message)
        finally:
            latency = time.perf_counter() - started
            MODEL_LATENCY.observe(latency)
        await store.keep(key, proposals, latency)
        return proposals

    return propose
