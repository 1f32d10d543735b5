"""API tokens: issued once, stored as a SHA-256 hash, scoped to a tenant and one principal or
the tenant's operator role, optionally expiring, revocable.

A token is 32 random bytes (URL-safe base64) behind an ``engram_`` prefix, so a leaked one is
recognisable in logs and scanners. Only its hash reaches the database: whoever reads the table
cannot call the API. Lookup is by the hash's unique index; revocation and expiry are checked in
the same query on every request, so neither needs a cache to be invalidated.
"""

from __future__ import annotations

import hashlib
import secrets
import uuid
from dataclasses import dataclass
from datetime import datetime, timedelta

import asyncpg

PREFIX = "engram_"


@dataclass(frozen=True)
class Grant:
    """What a presented token may reach: one principal of a tenant, or (``principal`` None,
    an operator) every principal of the tenant."""

    tenant: str
    principal: str | None
    token_id: uuid.UUID

    @property
    def operator(self) -> bool:
        return self.principal is None


@dataclass(frozen=True)
class TokenRecord:
    """A token as ``engram tokens list`` shows it: never the token, never its hash."""

    token_id: uuid.UUID
    tenant: str
    principal: str | None
    operator: bool
    created_at: datetime
    expires_at: datetime | None
    revoked_at: datetime | None


def token_hash(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


async def create_token(
    db: asyncpg.Pool | asyncpg.Connection,
    *,
    tenant: str,
    principal: str | None,
    expires_in: timedelta | None = None,
) -> tuple[TokenRecord, str]:
    """A new token for ``principal`` (or, with None, the tenant's operator role); the token is
    returned here and nowhere else."""
    token = PREFIX + secrets.token_urlsafe(32)
    row = await db.fetchrow(
        "INSERT INTO public.api_token (token_id, token_hash, tenant, principal, operator, "
        "expires_at) VALUES ($1, $2, $3, $4, $5, now() + $6::interval) "
        "RETURNING token_id, tenant, principal, operator, created_at, expires_at, revoked_at",
        uuid.uuid4(),
        token_hash(token),
        tenant,
        principal,
        principal is None,
        expires_in,
    )
    return TokenRecord(**dict(row)), token


async def list_tokens(
    db: asyncpg.Pool | asyncpg.Connection, *, tenant: str | None = None
) -> list[TokenRecord]:
    rows = await db.fetch(
        "SELECT token_id, tenant, principal, operator, created_at, expires_at, revoked_at "
        "FROM public.api_token WHERE $1::text IS NULL OR tenant = $1 "
        "ORDER BY tenant, created_at, token_id",
        tenant,
    )
    return [TokenRecord(**dict(row)) for row in rows]


async def revoke_token(db: asyncpg.Pool | asyncpg.Connection, token_id: uuid.UUID) -> bool:
    """Revoke at once, ending every inspector session signed in with it; False when there is
    no such token or it was already revoked."""
    revoked = await db.fetchval(
        "WITH revoked AS (UPDATE public.api_token SET revoked_at = now() "
        "WHERE token_id = $1 AND revoked_at IS NULL RETURNING token_id), "
        "ended AS (DELETE FROM public.ui_session WHERE token_id IN (SELECT token_id FROM revoked)) "
        "SELECT token_id FROM revoked",
        token_id,
    )
    return revoked is not None


async def grant_for(db: asyncpg.Pool | asyncpg.Connection, token: str) -> Grant | None:
    """The grant of a presented token; None when unknown, revoked or expired (the caller
    answers 401 alike, so a probe learns nothing about which)."""
    if not token.startswith(PREFIX):
        return None
    row = await db.fetchrow(
        "SELECT token_id, tenant, principal FROM public.api_token WHERE token_hash = $1 "
        "AND revoked_at IS NULL AND (expires_at IS NULL OR expires_at > now())",
        token_hash(token),
    )
    return None if row is None else Grant(row["tenant"], row["principal"], row["token_id"])
