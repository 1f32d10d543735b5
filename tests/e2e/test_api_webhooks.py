"""``/v1/webhooks`` with real tokens: the tenant's operator registers, lists, rotates and
removes endpoints; a principal's token is 403, another tenant's endpoint 404, a private or
link-local URL 422 with the reason, and a process without a KEK 503."""

from __future__ import annotations

import uuid
from pathlib import Path
from typing import Any

import asyncpg
import pytest
from fastapi.testclient import TestClient
from pydantic import SecretStr

from engram.api import create_api
from engram.infra.settings import (
    DatabaseSettings,
    KeysSettings,
    Settings,
    WebhooksSettings,
)
from engram.keys.kek import new_kek_text
from engram.keys.kek_file import create_kek_file
from engram.service.tokens import create_token
from tests.support.isolation import Isolated

pytestmark = pytest.mark.e2e


def _client(isolated: Isolated, *, kek: bool = True) -> TestClient:
    settings = Settings(
        kafka=isolated.kafka(),
        database=DatabaseSettings(url=isolated.database_url),
        # Without a KEK: none from the environment's file either, and the log in clear (a process
        # that appends refuses to start without one otherwise).
        keys=(
            KeysSettings(kek=SecretStr(new_kek_text()))
            if kek
            else KeysSettings(kek=None, kek_file=None, encrypt_log=False)
        ),
        webhooks=WebhooksSettings(allow_private=True),
    )
    return TestClient(create_api(settings))


def _auth(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


async def test_an_operator_registers_lists_rotates_and_removes_an_endpoint(
    isolated: Isolated, pool: asyncpg.Pool
) -> None:
    _, operator = await create_token(pool, tenant=isolated.tenant, principal=None)
    _, stranger = await create_token(pool, tenant="someone-else", principal=None)
    body = {"project": "garden", "url": "http://127.0.0.1:9/hook", "events": ["memory.formed"]}
    with _client(isolated) as client:
        created = client.post("/v1/webhooks", json=body, headers=_auth(operator))
        assert created.status_code == 201, created.text
        endpoint: dict[str, Any] = created.json()
        assert endpoint["secret"].startswith("whsec_") and endpoint["events"] == ["memory.formed"]
        listed = client.get("/v1/webhooks", headers=_auth(operator)).json()["items"]
        assert [e["id"] for e in listed] == [endpoint["id"]]
        assert "secret" not in listed[0] and endpoint["secret"] not in str(listed)
        assert client.get("/v1/webhooks", headers=_auth(stranger)).json() == {"items": []}
        path = f"/v1/webhooks/{endpoint['id']}"
        assert client.delete(path, headers=_auth(stranger)).status_code == 404
        rotated = client.post(f"{path}/rotate", headers=_auth(operator))
        assert rotated.status_code == 200 and rotated.json()["secret"] != endpoint["secret"]
        assert (
            client.get("/v1/webhooks", headers=_auth(operator)).json()["items"][0]["secrets"] == 2
        )
        deliveries = client.get("/v1/webhook-deliveries?failed=true", headers=_auth(operator))
        assert deliveries.status_code == 200 and deliveries.json() == {"items": []}
        assert client.delete(path, headers=_auth(operator)).status_code == 204
        assert client.delete(path, headers=_auth(operator)).status_code == 404
    stored = await pool.fetchval("SELECT count(*) FROM webhook_secret")
    assert stored == 0  # removed with its endpoint


async def test_private_and_link_local_urls_are_refused_with_the_reason(
    isolated: Isolated, pool: asyncpg.Pool
) -> None:
    _, operator = await create_token(pool, tenant=isolated.tenant, principal=None)
    settings = Settings(
        kafka=isolated.kafka(),
        database=DatabaseSettings(url=isolated.database_url),
        keys=KeysSettings(kek=SecretStr(new_kek_text())),
    )
    with TestClient(create_api(settings)) as client:
        for url, said in (
            ("http://10.0.0.1/", "10.0.0.1 is a private address"),
            ("http://169.254.169.254/", "169.254.169.254 is a link-local address"),
            ("http://127.0.0.1:8080/", "127.0.0.1 is a loopback address"),
            ("https://[::127.0.0.1]/", "an IPv6 form of 127.0.0.1, which is a loopback"),
            ("https://[64:ff9b::7f00:1]/", "an IPv6 form of 127.0.0.1, which is a loopback"),
            ("https://[2002:7f00:1::]/", "an IPv6 form of 127.0.0.1, which is a loopback"),
            ("https://[2002:a9fe:a9fe::]/", "an IPv6 form of 169.254.169.254, which is a link"),
            (
                "https://[2001:0:4136:e378:8000:63bf:80ff:fffe]/",
                "an IPv6 form of 127.0.0.1, which is a loopback",
            ),
        ):
            answer = client.post(
                "/v1/webhooks", json={"project": "garden", "url": url}, headers=_auth(operator)
            )
            assert answer.status_code == 422 and said in answer.json()["detail"], answer.text
    assert await pool.fetchval("SELECT count(*) FROM webhook_endpoint") == 0


async def test_a_principals_token_is_403_and_a_process_without_a_kek_503(
    isolated: Isolated, pool: asyncpg.Pool
) -> None:
    _, principal = await create_token(pool, tenant=isolated.tenant, principal="ana")
    _, operator = await create_token(pool, tenant=isolated.tenant, principal=None)
    body = {"project": "garden", "url": "http://127.0.0.1:9/hook"}
    with _client(isolated) as client:
        assert client.get("/v1/webhooks", headers=_auth(principal)).status_code == 403
        assert client.post("/v1/webhooks", json=body, headers=_auth(principal)).status_code == 403
        unknown = client.delete(f"/v1/webhooks/{uuid.uuid4()}", headers=_auth(operator))
        assert unknown.status_code == 404
    with _client(isolated, kek=False) as client:
        answer = client.post("/v1/webhooks", json=body, headers=_auth(operator))
        assert answer.status_code == 503 and "ENGRAM_KEYS_KEK" in answer.json()["detail"]


async def test_a_kek_from_its_file_alone_is_enough_for_webhooks(
    isolated: Isolated, pool: asyncpg.Pool, tmp_path: Path
) -> None:
    """``ENGRAM_KEYS_KEK_FILE`` (what `dev/services.sh` and compose give) without
    ``ENGRAM_KEYS_KEK``: the API stores and signs with it like with the variable."""
    _, operator = await create_token(pool, tenant=isolated.tenant, principal=None)
    kek_file = tmp_path / "kek"
    assert create_kek_file(kek_file, new_kek_text())
    settings = Settings(
        kafka=isolated.kafka(),
        database=DatabaseSettings(url=isolated.database_url),
        keys=KeysSettings(kek=None, kek_file=kek_file),
        webhooks=WebhooksSettings(allow_private=True),
    )
    body = {"project": "garden", "url": "http://127.0.0.1:9/hook"}
    with TestClient(create_api(settings)) as client:
        created = client.post("/v1/webhooks", json=body, headers=_auth(operator))
        assert created.status_code == 201, created.text
    assert await pool.fetchval("SELECT count(*) FROM webhook_secret") == 1


async def test_an_unreadable_body_is_a_422_saying_where(
    isolated: Isolated, pool: asyncpg.Pool
) -> None:
    """Over-deep JSON or bytes that are not UTF-8: a 422 saying what and where, like every door
    that reads JSON (engram/web/json_body.py), not a bare 400."""
    _, operator = await create_token(pool, tenant=isolated.tenant, principal=None)
    headers = _auth(operator) | {"Content-Type": "application/json"}
    with _client(isolated) as client:
        for body, said in (
            (b"[" * 10_000 + b"]" * 10_000, "nest too deeply"),
            (
                b'{"project": "p", "url": "\xff"}',
                "not UTF-8: byte 0xff (byte 25) at line 1, column 26",
            ),
        ):
            answer = client.post("/v1/webhooks", content=body, headers=headers)
            assert answer.status_code == 422, answer.text
            assert said in answer.json()["detail"][0]["ctx"]["error"], answer.text
