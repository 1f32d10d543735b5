"""``engram tokens``: a token is printed once, listed without itself, refused once revoked."""

from __future__ import annotations

import asyncio
import json
from datetime import datetime, timedelta

import asyncpg
import pytest

from engram.service.tokens import grant_for
from tests.e2e.test_cli import engram
from tests.support.isolation import Isolated

pytestmark = pytest.mark.e2e


async def test_create_prints_the_token_once_list_never_shows_it_and_revoke_refuses_it(
    isolated: Isolated, pool: asyncpg.Pool
) -> None:
    t = isolated.tenant
    created = await asyncio.to_thread(
        engram,
        isolated,
        "tokens",
        "create",
        "--tenant",
        t,
        "--principal",
        "ana",
        "--expires-in",
        "30d",
    )
    assert created.returncode == 0, created.stderr.decode()
    token = created.stdout.decode().strip()
    grant = await grant_for(pool, token)
    assert grant is not None and (grant.tenant, grant.principal) == (t, "ana")

    listed = await asyncio.to_thread(engram, isolated, "tokens", "list", "--tenant", t, "--json")
    [row] = [json.loads(line) for line in listed.stdout.decode().splitlines()]
    assert row["principal"] == "ana" and row["expires_at"] and row["revoked_at"] is None
    assert row["operator"] is False, "a JSON boolean, not the string 'False'"
    created_at = datetime.fromisoformat(row["created_at"])
    assert "T" in row["created_at"] and created_at.utcoffset() == timedelta(0)
    assert datetime.fromisoformat(row["expires_at"]) - created_at == timedelta(days=30)
    assert token not in listed.stdout.decode() + listed.stderr.decode()

    both = await asyncio.to_thread(
        engram, isolated, "tokens", "create", "--tenant", t, "--principal", "ana", "--operator"
    )
    assert both.returncode == 2
    revoked = await asyncio.to_thread(engram, isolated, "tokens", "revoke", row["token_id"])
    assert revoked.returncode == 0 and await grant_for(pool, token) is None
    again = await asyncio.to_thread(engram, isolated, "tokens", "revoke", row["token_id"])
    assert again.returncode == 1
