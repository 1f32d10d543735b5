"""``GET /v1/search`` over the live API's app: each principal searches only their own current
beliefs — even with another's words as the query — every hit carries the words to cite, pages
walk the whole result once, and no query, however hostile, is a 500."""

from __future__ import annotations

import asyncio
from typing import Any

import asyncpg
import pytest
from fastapi.testclient import TestClient

from engram.api import create_api
from engram.infra.settings import DatabaseSettings, KafkaSettings, Settings
from engram.service.tokens import create_token
from tests.support.episodes import turn
from tests.support.isolation import Isolated
from tests.support.projecting import batch_of, claim, project_all, seed_two_principals

pytestmark = pytest.mark.e2e

TOOLS = ["Vim", "Emacs", "Helix", "Nano", "Kakoune"]


def _client(isolated: Isolated, kafka: KafkaSettings) -> TestClient:
    settings = Settings(
        kafka=kafka,
        database=DatabaseSettings(url=isolated.database_url),
    )
    return TestClient(create_api(settings))


def _search(
    client: TestClient, token: str | None, **params: Any
) -> tuple[int, dict[str, Any] | Any]:
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    with client:
        response = client.get("/v1/search", params=params, headers=headers)
    return response.status_code, response.json()


async def _seed(isolated: Isolated, kafka: KafkaSettings, pool: asyncpg.Pool) -> dict[str, str]:
    """ana lives in Lisbon and uses five editors; bo lives in Cork. Their tokens."""
    t = isolated.tenant
    await seed_two_principals(kafka, pool, t)
    await project_all(
        kafka,
        pool,
        [
            batch_of(
                turn(t, "ana", "p", f"I use {tool} every day.", seq=10 + i),
                claim("I", "uses", tool, f"I use {tool}"),
                offset=10 + i,
            )
            for i, tool in enumerate(TOOLS)
        ],
    )
    return {who: (await create_token(pool, tenant=t, principal=who))[1] for who in ("ana", "bo")}


async def test_a_search_finds_the_callers_belief_with_the_words_to_cite(
    isolated: Isolated, kafka: KafkaSettings, pool: asyncpg.Pool
) -> None:
    tokens = await _seed(isolated, kafka, pool)
    client = _client(isolated, kafka)
    status, body = await asyncio.to_thread(_search, client, tokens["ana"], q="living in Lisbon")
    assert status == 200, body
    [hit] = body["hits"]
    assert hit["belief"]["object"] == "Lisbon" and 0 < hit["relevance"] <= hit["score"] * 10
    [evidence] = hit["belief"]["evidence"]
    assert evidence["quote"] == "I live in Lisbon"
    said = "I live in Lisbon."
    assert (
        said.encode()[evidence["span_start"] : evidence["span_end"]].decode() == "I live in Lisbon"
    )
    assert body["next_cursor"] is None


async def test_a_principals_token_never_finds_anothers_beliefs_even_with_their_words(
    isolated: Isolated, kafka: KafkaSettings, pool: asyncpg.Pool
) -> None:
    tokens = await _seed(isolated, kafka, pool)
    client = _client(isolated, kafka)
    for who, theirs, others in (("ana", "Lisbon", "Cork"), ("bo", "Cork", "Lisbon")):
        status, body = await asyncio.to_thread(_search, client, tokens[who], q=others)
        assert (status, body["hits"]) == (200, []), f"{who} found {others}"
        status, body = await asyncio.to_thread(
            _search, client, tokens[who], q=f"{theirs} or {others}"
        )
        assert [h["belief"]["object"] for h in body["hits"]] == [theirs]
        assert others not in str(body)
        status, _ = await asyncio.to_thread(
            _search, client, tokens[who], q=others, principal="bo" if who == "ana" else "ana"
        )
        assert status == 404


async def test_pages_walk_every_hit_once_in_the_order_of_one_big_page(
    isolated: Isolated, kafka: KafkaSettings, pool: asyncpg.Pool
) -> None:
    tokens = await _seed(isolated, kafka, pool)
    client = _client(isolated, kafka)
    _, whole = await asyncio.to_thread(_search, client, tokens["ana"], q="use", limit=100)
    order = [h["belief"]["belief_id"] for h in whole["hits"]]
    assert sorted(h["belief"]["object"] for h in whole["hits"]) == sorted(TOOLS)
    scores = [h["score"] for h in whole["hits"]]
    assert scores == sorted(scores, reverse=True)
    walked: list[str] = []
    cursor = None
    while True:
        params: dict[str, Any] = {"q": "use", "limit": 2}
        if cursor:
            params["cursor"] = cursor
        status, page = await asyncio.to_thread(_search, client, tokens["ana"], **params)
        assert status == 200, page
        walked += [h["belief"]["belief_id"] for h in page["hits"]]
        cursor = page["next_cursor"]
        if cursor is None:
            break
    assert walked == order


async def test_a_question_ranks_by_matched_words_in_mode_any_and_finds_nothing_in_mode_all(
    isolated: Isolated, kafka: KafkaSettings, pool: asyncpg.Pool
) -> None:
    tokens = await _seed(isolated, kafka, pool)
    client = _client(isolated, kafka)
    question = "Which editors do I use: Vim, Helix?"
    status, whole = await asyncio.to_thread(_search, client, tokens["ana"], q=question, limit=100)
    assert status == 200, whole
    found = [(h["belief"]["object"], h["matched_terms"]) for h in whole["hits"]]
    assert sorted(found[:2]) == [("Helix", 2), ("Vim", 2)]
    assert sorted(found[2:]) == [("Emacs", 1), ("Kakoune", 1), ("Nano", 1)]
    walked: list[str] = []
    cursor = None
    while True:
        params: dict[str, Any] = {"q": question, "limit": 2, "mode": "any"}
        if cursor:
            params["cursor"] = cursor
        status, page = await asyncio.to_thread(_search, client, tokens["ana"], **params)
        assert status == 200, page
        walked += [h["belief"]["belief_id"] for h in page["hits"]]
        cursor = page["next_cursor"]
        if cursor is None:
            break
    assert walked == [h["belief"]["belief_id"] for h in whole["hits"]]
    status, every = await asyncio.to_thread(_search, client, tokens["ana"], q=question, mode="all")
    assert (status, every["hits"]) == (200, [])
    status, refused = await asyncio.to_thread(
        _search, client, tokens["ana"], q=question, mode="some"
    )
    assert status == 422, refused


HOSTILE = [
    "'",
    '"',
    '"unterminated phrase',
    "a & | ! ( ) : * <->",
    "!!!",
    "the of and",
    "-",
    "or or or",
    "Lisbon' OR '1'='1",
    "'; DROP TABLE belief; --",
    "\\",
    "%",
    "Lisbon:*",
    "🙂 Lisbon",
    "\u202eLisbon",
    "x" * 256,
]


async def test_no_query_is_a_server_error_and_refusals_name_the_field(
    isolated: Isolated, kafka: KafkaSettings, pool: asyncpg.Pool
) -> None:
    tokens = await _seed(isolated, kafka, pool)
    client = _client(isolated, kafka)
    for q in HOSTILE:
        status, body = await asyncio.to_thread(_search, client, tokens["ana"], q=q)
        assert status in (200, 422), (q, status, body)
        if status == 422:
            assert body["detail"][0]["loc"] == ["query", "q"], (q, body)
    refused: list[dict[str, Any]] = [
        {"q": ""},
        {"q": "   "},
        {"q": "x" * 257},
        {"q": "Lisbon\x00"},
        {"q": "!!!"},
        {"q": "the of and"},
        {},
    ]
    for params in refused:
        status, body = await asyncio.to_thread(_search, client, tokens["ana"], **params)
        assert status == 422, (params, body)
        assert body["detail"][0]["loc"] == ["query", "q"], (params, body)
    for cursor in ("garbage", "W10", "WzEuMCwgIngiXQ", "x" * 201):
        status, body = await asyncio.to_thread(
            _search, client, tokens["ana"], q="use", cursor=cursor
        )
        assert status == 422 and body["detail"][0]["loc"] == ["query", "cursor"], (cursor, body)
    for limit in (0, 101, -1):
        status, _ = await asyncio.to_thread(_search, client, tokens["ana"], q="use", limit=limit)
        assert status == 422
    status, body = await asyncio.to_thread(_search, client, None, q="Lisbon")
    assert status == 401 and "bearer token" in body["detail"]
