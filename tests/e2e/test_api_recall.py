"""``GET /v1/recall`` over the live API's app, on real Kafka and PostgreSQL: beliefs first, then
the caller's own words from the index of messages (other roles on request, labelled); a token
recalls only its principal's memory, even with another's words; and no request, however
hostile, is a 500 — each refusal is a 4xx naming what is wrong."""

from __future__ import annotations

import asyncio
import uuid
from datetime import timedelta
from typing import Any

import asyncpg
import pytest
from fastapi.testclient import TestClient

from engram.api import create_api
from engram.infra.settings import DatabaseSettings, KafkaSettings, Settings
from engram.ingest.producer import EpisodeProducer
from engram.ingest.topics import ensure_topics
from engram.service.tokens import create_token
from tests.support.episodes import EPOCH, turn
from tests.support.indexing import index_everything
from tests.support.isolation import Isolated
from tests.support.projecting import seed_two_principals

pytestmark = pytest.mark.e2e

WAIT_S = 60


def _client(isolated: Isolated, kafka: KafkaSettings) -> TestClient:
    return TestClient(
        create_api(Settings(kafka=kafka, database=DatabaseSettings(url=isolated.database_url)))
    )


def _recall(client: TestClient, token: str | None, params: Any) -> tuple[int, Any]:
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    with client:
        response = client.get("/v1/recall", params=params, headers=headers)
    return response.status_code, response.json()


async def _seed(isolated: Isolated, kafka: KafkaSettings, pool: asyncpg.Pool) -> dict[str, str]:
    """ana lives in Lisbon (a belief) and told of a kimono from Japan (only a message, with the
    assistant's reply); bo lives in Cork and brought sake from Japan. Their tokens."""
    t = isolated.tenant
    await ensure_topics(kafka)
    await seed_two_principals(kafka, pool, t)
    turns = [
        turn(t, "ana", "p", "I live in Lisbon.", seq=0),
        turn(t, "bo", "p", "I live in Cork.", seq=1),
        turn(
            t,
            "ana",
            "p",
            "I brought a kimono back from Japan.",
            "What a souvenir from Japan!",
            seq=2,
            session="s2",
            roles=("user", "assistant"),
        ),
        turn(t, "bo", "p", "I brought sake back from Japan.", seq=3, session="s3"),
    ]
    async with EpisodeProducer(kafka) as producer:
        await producer.publish_many(turns)
    await index_everything(kafka, pool, timeout_s=WAIT_S)
    return {who: (await create_token(pool, tenant=t, principal=who))[1] for who in ("ana", "bo")}


def _said(body: dict[str, Any]) -> list[str]:
    return [h["belief"]["object"] if h["kind"] == "belief" else h["content"] for h in body["hits"]]


async def test_beliefs_then_own_words_and_each_token_recalls_only_its_principal(
    isolated: Isolated, kafka: KafkaSettings, pool: asyncpg.Pool
) -> None:
    tokens = await _seed(isolated, kafka, pool)
    client = _client(isolated, kafka)
    status, body = await asyncio.to_thread(
        _recall, client, tokens["ana"], {"q": "Do I live in Lisbon? What did I bring from Japan?"}
    )
    assert status == 200, body
    assert _said(body) == ["Lisbon", "I live in Lisbon.", "I brought a kimono back from Japan."]
    belief, quoted, kimono = body["hits"]
    assert belief["kind"] == "belief" and belief["belief"]["evidence"][0]["quote"]
    assert quoted["quoted_rank"] == 1 and kimono["quoted_rank"] is None
    assert (kimono["role"], kimono["own_words"], kimono["session"]) == ("user", True, "s2")
    assert {"event_id", "message_ordinal", "occurred_at", "partition", "offset"} <= set(kimono)
    assert [r["project"] for r in body["reflects"]] == ["p"]
    words_only = {"q": "Do I live in Lisbon? What did I bring from Japan?", "semantic": "false"}
    status, by_words = await asyncio.to_thread(_recall, client, tokens["ana"], words_only)
    assert status == 200 and _said(by_words) == _said(body)
    assert all(h.get("semantic_rank") is None for h in by_words["hits"])
    status, refused = await asyncio.to_thread(
        _recall, client, tokens["ana"], {"q": "Lisbon", "semantic": "perhaps"}
    )
    assert status == 422 and refused["detail"][0]["loc"] == ["query", "semantic"]
    # A question that is only a date is answered from that day, by words only too; "yesterday"
    # is read from the date the question is asked.
    said_on = EPOCH.strftime("%d %B %Y")
    status, dated = await asyncio.to_thread(
        _recall, client, tokens["ana"], {"q": said_on, "semantic": "false"}
    )
    assert status == 200, dated
    assert _said(dated) == ["I live in Lisbon.", "I brought a kimono back from Japan."]
    day_after = (EPOCH + timedelta(days=1)).isoformat()
    status, yesterday = await asyncio.to_thread(
        _recall, client, tokens["ana"], {"q": "yesterday", "asked_at": day_after}
    )
    assert status == 200 and _said(yesterday) == _said(dated), yesterday
    status, today = await asyncio.to_thread(_recall, client, tokens["ana"], {"q": "yesterday"})
    assert status == 200 and today["hits"] == [], "asked now, yesterday held nothing"

    status, body = await asyncio.to_thread(
        _recall,
        client,
        tokens["ana"],
        [("q", "souvenir Japan"), ("role", "user"), ("role", "assistant")],
    )
    assert status == 200, body
    labelled = {h["content"]: (h["role"], h["own_words"]) for h in body["hits"]}
    assert labelled["What a souvenir from Japan!"] == ("assistant", False)

    for who, others in (("ana", "Cork sake"), ("bo", "Lisbon kimono souvenir")):
        status, body = await asyncio.to_thread(_recall, client, tokens[who], {"q": others})
        assert (status, body["hits"]) == (200, []), f"{who} recalled {others}: {body}"
    status, body = await asyncio.to_thread(
        _recall, client, tokens["ana"], {"q": "Japan", "principal": "bo"}
    )
    assert status == 404, body


async def test_hostile_requests_are_refused_by_name_never_a_server_error(
    isolated: Isolated, kafka: KafkaSettings, pool: asyncpg.Pool
) -> None:
    tokens = await _seed(isolated, kafka, pool)
    client = _client(isolated, kafka)
    refused: list[tuple[Any, str]] = [
        ({"q": "Japan\x1b[2J"}, "q"),
        ({"q": "Japan\x07"}, "q"),
        ({"q": "x" * 10_000}, "q"),
        ({"q": "   "}, "q"),
        ({"q": "What would ana think?"}, "q"),
        ({"q": "Japan", "cursor": "garbage"}, "cursor"),
        ({"q": "Japan", "cursor": "x" * 500}, "cursor"),
        ({"q": "Japan", "role": "owner"}, "role"),
        ({"q": "Japan", "limit": 0}, "limit"),
        ({"q": "Japan", "limit": 10_000}, "limit"),
        ({"q": "Japan", "project": "../etc"}, "project"),
        ({"q": "Japan", "asked_at": "last Tuesday"}, "asked_at"),
        ({}, "q"),
    ]
    for params, field in refused:
        status, body = await asyncio.to_thread(_recall, client, tokens["ana"], params)
        assert status == 422, (params, status, body)
        assert body["detail"][0]["loc"][1] == field, (params, body)
    status, _ = await asyncio.to_thread(_recall, client, None, {"q": "Japan"})
    assert status == 401
    status, _ = await asyncio.to_thread(_recall, client, f"eg_{uuid.uuid4().hex}", {"q": "Japan"})
    assert status == 401
    # A page walked with a cursor: every hit once; the cursor is refused by search, and back.
    status, first = await asyncio.to_thread(
        _recall, client, tokens["ana"], {"q": "Lisbon Japan kimono", "limit": 1}
    )
    assert status == 200 and first["next_cursor"], first
    status, rest = await asyncio.to_thread(
        _recall,
        client,
        tokens["ana"],
        {"q": "Lisbon Japan kimono", "limit": 100, "cursor": first["next_cursor"]},
    )
    status_all, whole = await asyncio.to_thread(
        _recall, client, tokens["ana"], {"q": "Lisbon Japan kimono", "limit": 100}
    )
    assert (status, status_all) == (200, 200)
    assert _said(first) + _said(rest) == _said(whole)
    with client:
        searched = client.get(
            "/v1/search",
            params={"q": "Japan", "cursor": first["next_cursor"]},
            headers={"Authorization": f"Bearer {tokens['ana']}"},
        )
    assert searched.status_code == 422
