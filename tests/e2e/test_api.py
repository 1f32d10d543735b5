"""The read API over a real database: scoped by tenant and principal; freshness answers."""

from __future__ import annotations

import asyncio
import json
import time
import uuid
from pathlib import Path
from typing import Any

import asyncpg
import httpx
import pytest
from aiokafka import AIOKafkaConsumer, TopicPartition
from fastapi.testclient import TestClient

from engram.api import create_api
from engram.client import AsyncEngram, NotFormedYet
from engram.infra.settings import ApiSettings, DatabaseSettings, KafkaSettings, Settings
from engram.schemas.api import PROJECT_UNKNOWN, LogPosition
from engram.service.tokens import create_token
from tests.support.conditions import wait_until
from tests.support.http import first_ok
from tests.support.isolation import Isolated, running_engram
from tests.support.projecting import seed_two_principals
from tests.support.tcp_proxy import TcpProxy

pytestmark = pytest.mark.e2e


def _client(
    isolated: Isolated, kafka: KafkaSettings | None = None, dev: bool = False
) -> TestClient:
    settings = Settings(
        kafka=kafka or isolated.kafka(),
        database=DatabaseSettings(url=isolated.database_url),
        api=ApiSettings(dev_mode=dev),
    )
    return TestClient(create_api(settings))


async def _bearer(pool: asyncpg.Pool, tenant: str, principal: str | None) -> dict[str, str]:
    _, token = await create_token(pool, tenant=tenant, principal=principal)
    return {"Authorization": f"Bearer {token}"}


async def _seed(isolated: Isolated, kafka: KafkaSettings, pool: asyncpg.Pool) -> None:
    t = isolated.tenant
    await seed_two_principals(kafka, pool, t)


def _get(client: TestClient, path: str, **headers: str) -> tuple[int, object]:
    return _send(client, "GET", path, **headers)


def _send(
    client: TestClient, method: str, path: str, body: object = None, **headers: str
) -> tuple[int, Any]:
    with client:
        response = client.request(method, path, json=body, headers=headers)
    return response.status_code, response.json()


async def test_a_token_for_one_principal_can_neither_see_nor_reach_another(
    isolated: Isolated, kafka: KafkaSettings, pool: asyncpg.Pool
) -> None:
    await _seed(isolated, kafka, pool)
    t = isolated.tenant
    client = _client(isolated)
    ana = await _bearer(pool, t, "ana")
    status, body = await asyncio.to_thread(
        _get, client, f"/v1/beliefs?tenant={t}&principal=ana", **ana
    )
    assert status == 200 and [b["object"] for b in body["items"]] == ["Lisbon"]  # type: ignore[index]
    status, _ = await asyncio.to_thread(_get, client, f"/v1/beliefs?tenant={t}&principal=bo", **ana)
    assert status == 404, "outside the token's scope is not found, whether or not it exists"
    status, body = await asyncio.to_thread(_get, client, "/v1/beliefs", **ana)
    assert status == 200 and [b["object"] for b in body["items"]] == ["Lisbon"]  # type: ignore[index]
    status, _ = await asyncio.to_thread(_get, client, f"/v1/beliefs?tenant={t}&principal=ana")
    assert status == 401
    status, _ = await asyncio.to_thread(
        _get, client, "/v1/refusals?tenant=other&principal=ana", **ana
    )
    assert status == 404


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
    client = _client(isolated, dev=True)
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
    # A wait for a project nothing is known of is answered at once, not after the timeout.
    started = time.monotonic()
    status, body = await asyncio.to_thread(
        _get, client, f"/v1/freshness?tenant={t}&project=none&wait_for_offset=0&timeout_s=60"
    )
    assert status == 404 and time.monotonic() - started < 30
    assert body["detail"].startswith(f"{PROJECT_UNKNOWN} none in tenant {t}: ")  # type: ignore[index]
    assert "engram worker" in body["detail"]  # type: ignore[index]


async def test_wait_formed_outlasts_a_first_episode_that_formation_has_not_read_yet(
    isolated: Isolated, pool: asyncpg.Pool
) -> None:
    """The race of a project's first episode: appended, so the client waits on its position,
    but not yet in the backlog, so the server knows nothing of the project and says so (404)
    at once. The client asks again until formation has read it and formed it."""
    t = isolated.tenant
    app = create_api(
        Settings(
            database=DatabaseSettings(url=isolated.database_url),
            api=ApiSettings(dev_mode=True),
        )
    )
    app.state.pool = pool  # what the lifespan sets; the ASGI transport runs no lifespan
    unknown_answered = asyncio.Event()

    class Watching(httpx.AsyncBaseTransport):
        def __init__(self) -> None:
            self.inner = httpx.ASGITransport(app=app)

        async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
            response = await self.inner.handle_async_request(request)
            if response.status_code == 404:
                unknown_answered.set()
            return response

    first = LogPosition(event_id=uuid.uuid4(), tenant=t, project="new", partition=0, offset=4)
    async with AsyncEngram("http://engram", transport=Watching()) as engram:
        waiting = asyncio.create_task(engram.wait_formed(first, timeout_s=60, poll_s=5))
        await asyncio.wait_for(unknown_answered.wait(), timeout=30)
        assert not waiting.done(), "a 404 for a project not read yet does not end the wait"
        await pool.execute(
            'INSERT INTO formation_backlog (topic, partition, "offset", tenant, project, '
            "episode_id, occurred_at, appended_at, state) VALUES "
            "('e', 0, 4, $1, 'new', $2, now(), now(), 'formed')",
            t,
            first.event_id,
        )
        fresh = await asyncio.wait_for(waiting, timeout=30)
        assert fresh.formed_offset == 4
        with pytest.raises(NotFormedYet) as never:
            await engram.wait_formed(first.model_copy(update={"project": "typo"}), timeout_s=0.3)
        assert never.value.status == 404 and PROJECT_UNKNOWN in never.value.detail


async def test_an_unreachable_database_answers_503_with_retry_after_then_recovers(
    isolated: Isolated, kafka: KafkaSettings, pool: asyncpg.Pool
) -> None:
    await _seed(isolated, kafka, pool)
    proxy = await TcpProxy.in_front_of_url(isolated.database_url)
    settings = Settings(
        database=DatabaseSettings(url=proxy.url(isolated.database_url)),
        api=ApiSettings(dev_mode=True),
    )
    path = f"/v1/beliefs?tenant={isolated.tenant}&principal=ana"
    # The client runs the app on its own thread and loop, and this loop carries the proxy's
    # traffic: every blocking client call (start-up included) goes through a thread.
    client = TestClient(create_api(settings))
    await asyncio.to_thread(client.__enter__)
    try:
        first = await asyncio.to_thread(client.get, path)
        assert first.status_code == 200 and len(first.json()["items"]) == 1
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


async def test_writes_answer_with_a_log_position_and_refuse_what_cannot_apply(
    isolated: Isolated, kafka: KafkaSettings, pool: asyncpg.Pool
) -> None:
    await _seed(isolated, kafka, pool)
    t = isolated.tenant
    client = _client(isolated, kafka=kafka)
    ana, bo = await _bearer(pool, t, "ana"), await _bearer(pool, t, "bo")
    _, listed = await asyncio.to_thread(
        _send, client, "GET", f"/v1/beliefs?tenant={t}&principal=ana", **ana
    )
    lisbon = listed["items"][0]["belief_id"]
    one = f"/v1/beliefs/{lisbon}?tenant={t}&principal=ana"

    status, detail = await asyncio.to_thread(_send, client, "GET", one, **ana)
    assert status == 200 and detail["belief"]["object"] == "Lisbon"
    assert [e["quote"] for e in detail["belief"]["evidence"]] == ["I live in Lisbon"]
    as_bo = f"/v1/beliefs/{lisbon}?tenant={t}&principal=bo"
    assert (await asyncio.to_thread(_send, client, "GET", as_bo, **bo))[0] == 404
    corrections = as_bo.replace("?", "/corrections?")
    status, _ = await asyncio.to_thread(
        _send, client, "POST", corrections, {"kind": "untrue"}, **bo
    )
    assert status == 404
    status, _ = await asyncio.to_thread(_send, client, "DELETE", as_bo, **bo)
    assert status == 404

    ours = one.replace("?", "/corrections?")
    status, body = await asyncio.to_thread(_send, client, "POST", ours, {"kind": "changed"}, **ana)
    assert status == 422 and "`replacement`" in body["detail"]
    assert "--" not in body["detail"], "an HTTP answer names the JSON field, not a CLI flag"
    status, body = await asyncio.to_thread(
        _send, client, "POST", ours, {"kind": "untrue", "replacement": "Porto"}, **ana
    )
    assert status == 422 and body["detail"].startswith("`replacement` applies only to 'changed'")
    status, _ = await asyncio.to_thread(_send, client, "POST", ours, {"kind": "bogus"}, **ana)
    assert status == 422
    status, _ = await asyncio.to_thread(_send, client, "POST", ours, {"kind": "untrue"})
    assert status == 401
    assert await _log_end(kafka) == 0, "nothing appended for any of those"

    status, body = await asyncio.to_thread(_send, client, "POST", ours, {"kind": "untrue"}, **ana)
    assert status == 202 and body["project"] == "p" and body["offset"] == 0
    forget = f"/v1/principals/ana?tenant={t}"
    assert (await asyncio.to_thread(_send, client, "DELETE", forget, **bo))[0] == 404
    assert await _log_end(kafka) == 1


async def _log_end(kafka: KafkaSettings) -> int:
    consumer = AIOKafkaConsumer(bootstrap_servers=kafka.bootstrap)
    await consumer.start()
    try:
        partitions = consumer.partitions_for_topic(kafka.episodes_topic) or {0}
        ends = await consumer.end_offsets(
            [TopicPartition(kafka.episodes_topic, p) for p in partitions]
        )
        return int(sum(ends.values()))
    finally:
        await consumer.stop()


async def test_engram_api_says_where_it_serves_once_bound_in_a_log_line_and_a_human_one(
    isolated: Isolated, tmp_path: Path
) -> None:
    log_path = tmp_path / "api.log"
    said: dict[str, str] = {}

    def announced() -> bool:
        for line in log_path.read_text(encoding="utf-8", errors="replace").splitlines():
            if line.startswith("{") and '"api.serving"' in line:
                said["json"] = json.loads(line)["url"]
            elif line.startswith("serving the API on "):
                said["human"] = line
        return len(said) == 2

    # Port 0: the line must give the port actually bound, not the one asked for.
    with running_engram(isolated, "api", "--port", "0", log_path=log_path):
        await wait_until(announced, timeout_s=60, what="engram api announcing its address")
        url = said["json"]
        assert url.startswith("http://127.0.0.1:") and not url.endswith(":0")
        assert said["human"] == (
            f"serving the API on {url}: every request needs a bearer token (engram tokens create)"
        )
        assert (await first_ok(f"{url}/healthz")).json() == {"status": "ok"}


@pytest.mark.parametrize(
    ("path", "name"),
    [
        ("/v1/beliefs", "as_of"),
        ("/v1/runs", "since"),
        ("/v1/refusals", "since"),
        ("/v1/refusals/summary", "since"),
    ],
)
async def test_a_date_time_query_parameter_is_a_date_time_never_a_unix_timestamp(
    isolated: Isolated, path: str, name: str
) -> None:
    client = _client(isolated, dev=True)
    base = f"{path}?tenant={isolated.tenant}&principal=ana&{name}="
    for number in ("0.5", "1700000000", "-1", "2026"):
        status, body = await asyncio.to_thread(_get, client, base + number)
        assert status == 422, f"{name}={number} was read as a timestamp: {body}"
        [error] = body["detail"]  # type: ignore[index]
        assert error["loc"] == ["query", name] and "RFC 3339 date-time" in error["msg"]
    for written in ("2026-11-03T00:00:00Z", "2026-11-03T00:00:00%2B01:00"):
        status, body = await asyncio.to_thread(_get, client, base + written)
        assert status == 200, body
