"""Tokens on by default: stored hashed, scoped, revocable, expiring; no token is a 401 unless
the API runs in loopback-only development mode."""

from __future__ import annotations

import asyncio
import subprocess
import sys
import uuid
from typing import Any

import asyncpg
import pytest
from fastapi.testclient import TestClient

from engram.api import DevModeRefused, create_api
from engram.infra.settings import ApiSettings, DatabaseSettings, KafkaSettings, Settings
from engram.service.tokens import create_token, list_tokens, revoke_token, token_hash
from tests.e2e.test_api import _log_end
from tests.support.episodes import turn
from tests.support.isolation import REPO, Isolated
from tests.support.projecting import seed_two_principals

pytestmark = pytest.mark.e2e


def _client(isolated: Isolated, **api: Any) -> TestClient:
    settings = Settings(
        kafka=isolated.kafka(),
        database=DatabaseSettings(url=isolated.database_url),
        api=ApiSettings(**api),
    )
    return TestClient(create_api(settings))


def _get(client: TestClient, path: str, token: str | None = None) -> tuple[int, Any]:
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    with client:
        response = client.get(path, headers=headers)
    return response.status_code, response.json()


async def _seed(isolated: Isolated, kafka: KafkaSettings, pool: asyncpg.Pool) -> None:
    t = isolated.tenant
    await seed_two_principals(kafka, pool, t)


async def test_only_the_hash_of_a_token_is_stored_and_listing_never_shows_it(
    isolated: Isolated, pool: asyncpg.Pool
) -> None:
    record, token = await create_token(pool, tenant=isolated.tenant, principal="ana")
    stored = await pool.fetchrow("SELECT * FROM api_token WHERE token_id = $1", record.token_id)
    assert stored is not None and stored["token_hash"] == token_hash(token)
    assert token not in str(dict(stored))
    [listed] = await list_tokens(pool, tenant=isolated.tenant)
    assert listed.principal == "ana" and not listed.operator and token not in repr(listed)


async def test_no_token_an_unknown_one_a_revoked_one_and_an_expired_one_are_all_401(
    isolated: Isolated, kafka: KafkaSettings, pool: asyncpg.Pool
) -> None:
    await _seed(isolated, kafka, pool)
    t = isolated.tenant
    client = _client(isolated)
    path = f"/v1/beliefs?tenant={t}&principal=ana"
    revoked, revoked_token = await create_token(pool, tenant=t, principal="ana")
    expired, expired_token = await create_token(pool, tenant=t, principal="ana")
    _, good = await create_token(pool, tenant=t, principal="ana")
    assert (await asyncio.to_thread(_get, client, path, revoked_token))[0] == 200
    assert await revoke_token(pool, revoked.token_id)
    await pool.execute(
        "UPDATE api_token SET created_at = now() - interval '2 days', "
        "expires_at = now() - interval '1 day' WHERE token_id = $1",
        expired.token_id,
    )
    for token in (None, "engram_not-a-token", revoked_token, expired_token):
        status, body = await asyncio.to_thread(_get, client, path, token)
        assert status == 401, token
        assert "bearer token" in body["detail"]
    assert (await asyncio.to_thread(_get, client, path, good))[0] == 200


async def test_an_operator_reaches_every_principal_of_its_tenant_and_no_other_tenant(
    isolated: Isolated, kafka: KafkaSettings, pool: asyncpg.Pool
) -> None:
    await _seed(isolated, kafka, pool)
    t = isolated.tenant
    _, operator = await create_token(pool, tenant=t, principal=None)
    client = _client(isolated)
    status, body = await asyncio.to_thread(_get, client, "/v1/beliefs?principal=bo", operator)
    assert status == 200 and [b["object"] for b in body["items"]] == ["Cork"]
    status, _ = await asyncio.to_thread(_get, client, "/v1/beliefs", operator)
    assert status == 422, "an operator names the principal"
    status, _ = await asyncio.to_thread(
        _get, client, "/v1/beliefs?tenant=elsewhere&principal=bo", operator
    )
    assert status == 404
    status, _ = await asyncio.to_thread(
        _get, client, "/v1/freshness?tenant=elsewhere&project=p", operator
    )
    assert status == 404


async def test_a_principal_token_gets_404_for_another_principals_belief_whether_or_not_it_exists(
    isolated: Isolated, kafka: KafkaSettings, pool: asyncpg.Pool
) -> None:
    await _seed(isolated, kafka, pool)
    t = isolated.tenant
    _, ana = await create_token(pool, tenant=t, principal="ana")
    _, bo = await create_token(pool, tenant=t, principal="bo")
    client = _client(isolated)
    _, listed = await asyncio.to_thread(_get, client, "/v1/beliefs", bo)
    [cork] = listed["items"]
    as_bo = await asyncio.to_thread(_get, client, f"/v1/beliefs/{cork['belief_id']}", ana)
    nowhere = await asyncio.to_thread(_get, client, f"/v1/beliefs/{uuid.uuid4()}", ana)
    assert as_bo[0] == nowhere[0] == 404
    named = await asyncio.to_thread(
        _get, client, f"/v1/beliefs/{cork['belief_id']}?principal=bo", ana
    )
    assert named[0] == 404 and named[1] == {"detail": "nothing here for this token"}


def test_development_mode_serves_without_tokens_only_on_loopback(isolated: Isolated) -> None:
    with pytest.raises(DevModeRefused, match="loopback"):
        _client(isolated, dev_mode=True, host="0.0.0.0")
    status, body = _get(_client(isolated, dev_mode=True), "/v1/beliefs?principal=ana")
    assert status == 200 and body == {"items": [], "next_cursor": None}


def test_the_cli_refuses_development_mode_on_a_public_address() -> None:
    refused = subprocess.run(
        [sys.executable, "-m", "engram", "api", "--dev", "--host", "0.0.0.0"],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert refused.returncode == 2 and "loopback" in refused.stderr


async def test_every_endpoint_refuses_a_principals_token_aimed_at_another_and_appends_nothing(
    isolated: Isolated, kafka: KafkaSettings, pool: asyncpg.Pool
) -> None:
    await _seed(isolated, kafka, pool)
    t = isolated.tenant
    _, ana = await create_token(pool, tenant=t, principal="ana")
    bo_belief = await pool.fetchval(
        "SELECT belief_id FROM belief WHERE tenant = $1 AND principal = 'bo'", t
    )
    settings = Settings(
        kafka=kafka,
        database=DatabaseSettings(url=isolated.database_url),
    )
    client = TestClient(create_api(settings))
    bo_turn = turn(t, "bo", "p", "I live in Oslo.", seq=9).model_dump(mode="json")
    remember = {
        "event_id": str(uuid.uuid4()),
        "principal": "bo",
        "project": "p",
        "session": "s",
        "occurred_at": "2026-01-01T00:00:00Z",
        "message": {"ordinal": 0, "role": "user", "content": "Remember I like jazz."},
    }
    aimed: list[tuple[str, str, object, int]] = [
        ("GET", "/v1/beliefs?principal=bo", None, 404),
        ("GET", f"/v1/beliefs/{bo_belief}", None, 404),
        ("GET", "/v1/refusals?principal=bo", None, 404),
        ("GET", "/v1/freshness?tenant=elsewhere&project=p", None, 404),
        ("POST", f"/v1/beliefs/{bo_belief}/corrections", {"kind": "untrue"}, 404),
        ("DELETE", f"/v1/beliefs/{bo_belief}", None, 404),
        ("DELETE", "/v1/principals/bo", None, 404),
        ("POST", "/v1/turns", bo_turn, 403),
        ("POST", "/v1/remember", remember, 403),
    ]

    def send_all() -> list[tuple[str, int]]:
        with client:
            return [
                (
                    f"{method} {path}",
                    client.request(
                        method, path, json=body, headers={"Authorization": f"Bearer {ana}"}
                    ).status_code,
                )
                for method, path, body, _ in aimed
            ]

    answers = await asyncio.to_thread(send_all)
    assert answers == [(f"{m} {p}", status) for m, p, _, status in aimed]
    assert await _log_end(kafka) == 0
