"""The inspector's sessions in PostgreSQL (``engram.service.sessions``): the browser holds a
random id and the table only its hash; a session ends on sign-out, at its expiry, and when its
token is revoked or expires — for every copy of its cookie."""

from __future__ import annotations

import asyncpg
import pytest

from engram.service.sessions import end_session, open_session, session_hash, session_of
from engram.service.tokens import Grant, create_token, grant_for, revoke_token

pytestmark = pytest.mark.integration


async def _grant(pool: asyncpg.Pool, principal: str | None = "ana") -> tuple[Grant, str]:
    record, token = await create_token(pool, tenant="t", principal=principal)
    grant = await grant_for(pool, token)
    assert grant is not None and grant.token_id == record.token_id
    return grant, token


async def test_a_session_shows_its_principal_and_the_table_holds_only_a_hash(
    pool: asyncpg.Pool,
) -> None:
    grant, token = await _grant(pool)
    session_id = await open_session(pool, grant=grant, principal="ana", lifetime_s=60)
    assert len(session_id) >= 43 and token not in session_id
    found = await session_of(pool, session_id)
    assert found is not None and (found.tenant, found.principal, found.operator) == (
        "t",
        "ana",
        False,
    )
    assert found.grant == grant
    [row] = await pool.fetch("SELECT * FROM ui_session")
    assert row["session_hash"] == session_hash(session_id)
    assert session_id not in str(dict(row)) and token not in str(dict(row))
    assert await session_of(pool, session_id[:-1] + "A") is None
    assert await session_of(pool, None) is None and await session_of(pool, "x" * 500) is None


async def test_signing_out_ends_the_session(pool: asyncpg.Pool) -> None:
    grant, _ = await _grant(pool)
    session_id = await open_session(pool, grant=grant, principal="ana", lifetime_s=60)
    other = await open_session(pool, grant=grant, principal="ana", lifetime_s=60)
    await end_session(pool, session_id)
    assert await session_of(pool, session_id) is None
    assert await session_of(pool, other) is not None  # another browser's sign-in stays


async def test_an_expired_session_is_refused_and_swept_at_the_next_sign_in(
    pool: asyncpg.Pool,
) -> None:
    grant, _ = await _grant(pool)
    session_id = await open_session(pool, grant=grant, principal="ana", lifetime_s=60)
    await pool.execute(
        "UPDATE ui_session SET created_at = now() - interval '2 hours', "
        "expires_at = now() - interval '1 hour'"
    )
    assert await session_of(pool, session_id) is None
    await open_session(pool, grant=grant, principal="ana", lifetime_s=60)
    assert await pool.fetchval("SELECT count(*) FROM ui_session") == 1


async def test_revoking_or_expiring_the_token_ends_its_sessions(pool: asyncpg.Pool) -> None:
    grant, _ = await _grant(pool)
    operator, _ = await _grant(pool, principal=None)
    mine = await open_session(pool, grant=grant, principal="ana", lifetime_s=60)
    looking = await open_session(pool, grant=operator, principal="ana", lifetime_s=60)
    assert (await session_of(pool, looking)).operator  # type: ignore[union-attr]
    await pool.execute(
        "UPDATE api_token SET created_at = now() - interval '2 days', "
        "expires_at = now() - interval '1 day' WHERE token_id = $1",
        operator.token_id,
    )
    assert await session_of(pool, looking) is None  # its token expired
    assert await revoke_token(pool, grant.token_id)
    assert await session_of(pool, mine) is None
    assert (
        await pool.fetchval("SELECT count(*) FROM ui_session WHERE token_id = $1", grant.token_id)
        == 0
    )


async def test_a_development_mode_session_has_no_token(pool: asyncpg.Pool) -> None:
    session_id = await open_session(pool, grant=None, principal="ana", lifetime_s=60)
    found = await session_of(pool, session_id)
    assert found is not None and found.grant is None
    assert (found.tenant, found.principal, found.operator) == ("default", "ana", False)
