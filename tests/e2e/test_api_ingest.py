"""HTTP ingest on real Kafka and PostgreSQL: validated whole, scoped, measured, then appended;
an unreachable log is a 503 that appended nothing."""

from __future__ import annotations

import asyncio
import socket
import uuid
from typing import Any

import asyncpg
import pytest
from aiokafka import AIOKafkaConsumer, TopicPartition
from fastapi.testclient import TestClient

from engram.api import create_api
from engram.infra.settings import ApiSettings, DatabaseSettings, KafkaSettings, Settings
from engram.service.tokens import create_token
from tests.support.episodes import turn
from tests.support.isolation import Isolated

pytestmark = pytest.mark.e2e


def _client(isolated: Isolated, kafka: KafkaSettings, **api: Any) -> TestClient:
    settings = Settings(
        kafka=kafka,
        database=DatabaseSettings(url=isolated.database_url),
        api=ApiSettings(**api),
    )
    return TestClient(create_api(settings))


def _post(client: TestClient, path: str, body: object, token: str) -> tuple[int, Any, Any]:
    with client:
        response = client.post(path, json=body, headers={"Authorization": f"Bearer {token}"})
    return response.status_code, response.json(), response.headers


def _turn(tenant: str, principal: str, text: str, seq: int = 0) -> dict[str, Any]:
    return turn(tenant, principal, "p", text, seq=seq).model_dump(mode="json")


async def _log_records(kafka: KafkaSettings) -> list[bytes]:
    consumer = AIOKafkaConsumer(bootstrap_servers=kafka.bootstrap, auto_offset_reset="earliest")
    await consumer.start()
    try:
        partitions = [
            TopicPartition(kafka.episodes_topic, p)
            for p in consumer.partitions_for_topic(kafka.episodes_topic) or {0}
        ]
        ends = await consumer.end_offsets(partitions)
        consumer.assign(partitions)
        records: list[bytes] = []
        while sum(ends.values()) > len(records):
            batches = await consumer.getmany(timeout_ms=1000)
            records += [r.value for batch in batches.values() for r in batch]
        return records
    finally:
        await consumer.stop()


async def test_turns_are_appended_in_order_and_answered_with_their_log_positions(
    isolated: Isolated, kafka: KafkaSettings, pool: asyncpg.Pool
) -> None:
    t = isolated.tenant
    _, token = await create_token(pool, tenant=t, principal="ana")
    client = _client(isolated, kafka)
    one = _turn(t, "ana", "I live in Lisbon.", seq=0)
    status, body, _ = await asyncio.to_thread(_post, client, "/v1/turns", one, token)
    assert status == 202
    assert body["appended"] == [
        {"event_id": one["event_id"], "tenant": t, "project": "p", "partition": 0, "offset": 0}
    ]
    batch = {"turns": [_turn(t, "ana", "I like tea.", seq=1), _turn(t, "ana", "Hi.", seq=2)]}
    status, body, _ = await asyncio.to_thread(_post, client, "/v1/turns", batch, token)
    assert status == 202 and [a["offset"] for a in body["appended"]] == [1, 2]
    remember = {
        "event_id": str(uuid.uuid4()),
        "tenant": t,
        "principal": "ana",
        "project": "p",
        "session": "s1",
        "occurred_at": "2026-01-01T00:00:00Z",
        "message": {"ordinal": 0, "role": "user", "content": "Remember that I am vegetarian."},
    }
    status, body, _ = await asyncio.to_thread(_post, client, "/v1/remember", remember, token)
    assert status == 202 and body["offset"] == 3
    records = await _log_records(kafka)
    # Its type, in clear or (the log is encrypted by default) as the sealed event's sealed_type.
    assert [r.count(b'"memory.remember"') for r in records] == [0, 0, 0, 1]


async def test_a_request_with_one_bad_episode_appends_nothing_and_names_the_field(
    isolated: Isolated, kafka: KafkaSettings, pool: asyncpg.Pool
) -> None:
    t = isolated.tenant
    _, token = await create_token(pool, tenant=t, principal="ana")
    client = _client(isolated, kafka, max_body_bytes=300_000)
    good = _turn(t, "ana", "I live in Lisbon.", seq=0)
    bad = _turn(t, "ana", "I like tea.", seq=1)
    bad["messages"][0]["role"] = "narrator"
    status, body, _ = await asyncio.to_thread(
        _post, client, "/v1/turns", {"turns": [good, bad]}, token
    )
    assert status == 422
    assert any(e["loc"][-2:] == [0, "role"] and "turns" in e["loc"] for e in body["detail"])

    correction = {**good, "type": "belief.corrected"}
    status, body, _ = await asyncio.to_thread(_post, client, "/v1/turns", correction, token)
    assert status == 422 and body["detail"][0]["type"] == "episode_type"
    assert "corrections are appended by Engram only" in body["detail"][0]["msg"]

    for_bo = _turn(t, "bo", "I live in Cork.", seq=2)
    status, body, _ = await asyncio.to_thread(
        _post, client, "/v1/turns", {"turns": [good, for_bo]}, token
    )
    assert status == 403 and "/bo" in body["detail"]

    large = _turn(t, "ana", "I like tea. " * 2600, seq=3)  # ~31 kB: a valid message
    large_batch = {"turns": [good] + [large] * 10}  # each under the event limit, ~340 kB in all
    status, body, _ = await asyncio.to_thread(_post, client, "/v1/turns", large_batch, token)
    assert status == 413 and "ENGRAM_API_MAX_BODY_BYTES" in body["detail"]

    many = {**large, "messages": [{**large["messages"][0], "ordinal": i} for i in range(9)]}
    status, body, _ = await asyncio.to_thread(
        _post, client, "/v1/turns", {"turns": [good, many]}, token
    )
    assert status == 413 and "episode 1 " in body["detail"]
    assert "ENGRAM_KAFKA_MAX_EVENT_BYTES" in body["detail"]

    for role in ("assistant", "tool", "system"):  # accepted before, and formed nothing
        remember = {
            "event_id": str(uuid.uuid4()),
            "project": "p",
            "session": "s1",
            "occurred_at": "2026-01-01T00:00:00Z",
            "message": {"ordinal": 0, "role": role, "content": "Remember: she lives in Oslo."},
        }
        status, body, _ = await asyncio.to_thread(_post, client, "/v1/remember", remember, token)
        assert status == 422, role
        [error] = body["detail"]
        assert error["loc"] == ["body", "message", "role"]
        assert "only the principal's own words can be remembered" in error["msg"]
    assert await _log_records(kafka) == [], "nothing appended for any refused request"


def _closed_port() -> int:
    """A loopback port nothing listens on: a real "unreachable" for a Kafka client."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


async def test_an_unreachable_log_answers_503_with_retry_after_and_appends_nothing(
    isolated: Isolated, kafka: KafkaSettings, pool: asyncpg.Pool
) -> None:
    t = isolated.tenant
    _, token = await create_token(pool, tenant=t, principal="ana")
    down = kafka.model_copy(update={"bootstrap": f"127.0.0.1:{_closed_port()}"})
    client = _client(isolated, down)
    body = {"turns": [_turn(t, "ana", "I live in Lisbon.", seq=0)]}
    status, answer, headers = await asyncio.to_thread(_post, client, "/v1/turns", body, token)
    assert status == 503 and headers["Retry-After"] == "5"
    assert "unreachable" in answer["detail"]
    assert await _log_records(kafka) == []
    # The same request against the reachable log then succeeds: the caller's retry.
    status, answer, _ = await asyncio.to_thread(
        _post, _client(isolated, kafka), "/v1/turns", body, token
    )
    assert status == 202 and len(await _log_records(kafka)) == 1
