"""The memory inspector's sessions, kept in PostgreSQL (``ui_session``, migration 0028).

A sign-in makes a session: 32 random bytes (URL-safe base64) that the browser keeps in its
cookie, and a row holding only their SHA-256 beside the token's id and the principal the session
shows. The cookie carries no token and no scope, so a copy of it is worth exactly what the row
is worth, and the row can end: on sign-out (:func:`end_session`), at its expiry, when its token
is revoked or expires (checked in the same query on every page, and
:func:`engram.service.tokens.revoke_token` deletes the rows), when the token is deleted (the foreign key cascades) and when
the principal it shows is forgotten (:mod:`engram.projections.beliefs.forgetting` deletes the rows).
"""

from __future__ import annotations

import hashlib
import secrets
import uuid
from dataclasses import dataclass

import asyncpg

from engram.service.tokens import Grant

SESSION_BYTES = 32


@dataclass(frozen=True, slots=True)
class InspectorSession:
    """What a live session shows and under which grant: the token's grant as it is now (None
    for a development-mode session, which has no token) and the principal the session looks
    at (the token's own, or the one an operator chose at sign-in)."""

    grant: Grant | None
    tenant: str
    principal: str
    operator: bool


def session_hash(session_id: str) -> str:
    return hashlib.sha256(session_id.encode()).hexdigest()


async def open_session(
    db: asyncpg.Pool | asyncpg.Connection,
    *,
    grant: Grant | None,
    principal: str,
    lifetime_s: int,
) -> str:
    """A new session for ``grant`` (None: development mode, tenant ``default``) showing
    ``principal``; returns its id, which is stored nowhere but in the browser. Expired
    sessions are swept on the way (the expiry index keeps that cheap)."""
    session_id = secrets.token_urlsafe(SESSION_BYTES)
    await db.execute("DELETE FROM public.ui_session WHERE expires_at <= now()")
    await db.execute(
        "INSERT INTO public.ui_session (session_hash, token_id, tenant, principal, operator, "
        "expires_at) VALUES ($1, $2, $3, $4, $5, now() + make_interval(secs => $6))",
        session_hash(session_id),
        None if grant is None else grant.token_id,
        "default" if grant is None else grant.tenant,
        principal,
        grant is not None and grant.operator,
        float(lifetime_s),
    )
    return session_id


async def session_of(
    db: asyncpg.Pool | asyncpg.Connection, session_id: str | None
) -> InspectorSession | None:
    """The live session of a cookie; None for no cookie, an unknown or ended session, one past
    its expiry, or one whose token is revoked or expired."""
    if not session_id or len(session_id) > 4 * SESSION_BYTES:
        return None
    row = await db.fetchrow(
        """
        SELECT s.tenant, s.principal, s.operator, s.token_id,
               t.tenant AS grant_tenant, t.principal AS grant_principal
        FROM public.ui_session s
        LEFT JOIN public.api_token t ON t.token_id = s.token_id
        WHERE s.session_hash = $1 AND s.expires_at > now()
          AND (s.token_id IS NULL
               OR (t.revoked_at IS NULL AND (t.expires_at IS NULL OR t.expires_at > now())))
        """,
        session_hash(session_id),
    )
    if row is None:
        return None
    token_id: uuid.UUID | None = row["token_id"]
    grant = (
        None if token_id is None else Grant(row["grant_tenant"], row["grant_principal"], token_id)
    )
    return InspectorSession(grant, row["tenant"], row["principal"], row["operator"])


async def end_session(db: asyncpg.Pool | asyncpg.Connection, session_id: str | None) -> None:
    """Sign-out: the session is gone, whoever still holds a copy of its cookie."""
    if session_id:
        await db.execute(
            "DELETE FROM public.ui_session WHERE session_hash = $1", session_hash(session_id)
        )
