"""The read API over a real database: scoped by tenant and principal; freshness answers."""

from __future__ import annotations

import asyncio

import asyncpg
import pytest
from fastapi.testclient import TestClient

from engram.api import create_api
from engram.shared.settings import ApiSettings, DatabaseSettings, KafkaSettings, Settings
from tests.support.episodes import turn
from tests.support.isolation import Isolated
from tests.support.projecting import batch_of, claim, project_all
from tests.support.tcp_proxy import TcpProxy

pytestmark = pytest.mark.e2e


def _client(isolated: Isolated, tokens: list[str]) -> TestClient:
    settings = Settings(
        database=DatabaseSettings(url=isolated.database_url),  # type: ignore[arg-type]
        api=ApiSettings(tokens=tokens),  # type: ignore[arg-type]
    )
    return TestClient(create_api(settings))


async def _seed(isolated: Isolated, kafka: KafkaSettings, pool: asyncpg.Pool) -> None:
    t = isolated.tenant
    await project_all(
        kafka,
        pool,
        [
            batch_of(
                turn(t, "ana", "p", "I live in Lisbon.", seq=0),
                claim("I", "lives_in", "Lisbon", "I live in Lisbon"),
            ),
            batch_of(
                turn(t, "bo", "p", "I live in Cork.", seq=1),
                claim("I", "lives_in", "Cork", "I live in Cork"),
                offset=1,
            ),
        ],
    )


def _get(client: TestClient, path: str, **headers: str) -> tuple[int, object]:
    with client:
        response = client.get(path, headers=headers)
    return response.status_code, response.json()


async def test_a_token_for_one_principal_can_neither_see_nor_reach_another(
    isolated: Isolated, kafka: KafkaSettings, pool: asyncpg.Pool
) -> None:
    await _seed(isolated, kafka, pool)
    t = isolated.tenant
    client = _client(isolated, [f"ana-token={t}/ana", f"bo-token={t}/bo"])
    ana = {"Authorization": "Bearer ana-token"}
    status, body = await asyncio.to_thread(
        _get, client, f"/v1/beliefs?tenant={t}&principal=ana", **ana
    )
    assert status == 200 and [b["object"] for b in body] == ["Lisbon"]  # type: ignore[union-attr]
    status, _ = await asyncio.to_thread(_get, client, f"/v1/beliefs?tenant={t}&principal=bo", **ana)
    assert status == 403
    status, _ = await asyncio.to_thread(_get, client, f"/v1/beliefs?tenant={t}&principal=ana")
    assert status == 401
    status, _ = await asyncio.to_thread(
        _get, client, "/v1/refusals?tenant=other&principal=ana", **ana
    )
    assert status == 403


async def test_freshness_reports_offsets_and_times_out_honestly(
    isolated: Isolated, pool: asyncpg.Pool
) -> None:
    t = isolated.tenant
    await pool.execute(
        'INSERT INTO formation_backlog (topic, partition, "offset", tenant, project, episode_id, '
        "occurred_at, appended_at, state) VALUES "
        "('e', 0, 3, $1, 'p', gen_random_uuid(), now(), now(), 'formed'), "
        "('e', 0, 7, $1, 'p', gen_random_uuid(), now(), now() - interval '5 seconds', 'pending')",
        t,
    )
    client = _client(isolated, [])
    status, body = await asyncio.to_thread(_get, client, f"/v1/freshness?tenant={t}&project=p")
    assert status == 200
    assert body["log_offset"] == 7 and body["formed_offset"] == 3  # type: ignore[index]
    assert body["lag_episodes"] == 1 and body["lag_seconds"] >= 5  # type: ignore[index]
    status, _ = await asyncio.to_thread(
        _get, client, f"/v1/freshness?tenant={t}&project=p&wait_for_offset=3&timeout_s=1"
    )
    assert status == 200
    status, _ = await asyncio.to_thread(
        _get, client, f"/v1/freshness?tenant={t}&project=p&wait_for_offset=7&timeout_s=0.3"
    )
    assert status == 408
    status, body = await asyncio.to_thread(_get, client, f"/v1/freshness?tenant={t}&project=none")
    assert body["formed_offset"] is None and body["log_offset"] is None  # type: ignore[index]


async def test_an_unreachable_database_answers_503_with_retry_after_then_recovers(
    isolated: Isolated, kafka: KafkaSettings, pool: asyncpg.Pool
) -> None:
    await _seed(isolated, kafka, pool)
    proxy = await TcpProxy.in_front_of_url(isolated.database_url)
    settings = Settings(
        database=DatabaseSettings(url=proxy.url(isolated.database_url)),  # type: ignore[arg-type]
    )
    path = f"/v1/beliefs?tenant={isolated.tenant}&principal=ana"
    # The client runs the app on its own thread and loop, and this loop carries the proxy's
    # traffic: every blocking client call (start-up included) goes through a thread.
    client = TestClient(create_api(settings))
    await asyncio.to_thread(client.__enter__)
    try:
        first = await asyncio.to_thread(client.get, path)
        assert first.status_code == 200 and len(first.json()) == 1
        proxy.cut()
        down = await asyncio.to_thread(client.get, path)
        assert down.status_code == 503
        assert down.headers["Retry-After"] == "5"
        assert "unreachable" in down.json()["detail"]
        await proxy.restore()
        again = await asyncio.to_thread(client.get, path)
        assert again.status_code == 200 and again.json() == first.json()
    finally:
        await asyncio.to_thread(client.__exit__, None, None, None)
        await proxy.close()
