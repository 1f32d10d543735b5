"""The read and audit endpoints over a real projection: pages that follow their cursor, filters,
belief detail with its chain and run, runs, refusals and their summary, a session's diagnosis
and the user model — each one scoped, so ana's token never sees bo's rows (404, not 403).
"""

from __future__ import annotations

import asyncio
import uuid
from typing import Any

import asyncpg
import httpx
import pytest
from fastapi.testclient import TestClient

from engram.api import create_api
from engram.client import AsyncEngram, EngramError, every_item
from engram.infra.settings import DatabaseSettings, KafkaSettings, Settings
from engram.service.tokens import create_token
from tests.support.isolation import Isolated
from tests.support.projecting import PARKED_EPISODE, seed_audit_story

pytestmark = pytest.mark.e2e


class Api:
    """The app on a TestClient, with a token per principal."""

    def __init__(self, isolated: Isolated, tokens: dict[str, str]) -> None:
        settings = Settings(
            kafka=isolated.kafka(),
            database=DatabaseSettings(url=isolated.database_url),
        )
        self.client = TestClient(create_api(settings))
        self.tokens = tokens

    def get(self, who: str, path: str, **params: Any) -> tuple[int, Any]:
        headers = {"Authorization": f"Bearer {self.tokens[who]}"}
        response = self.client.get(path, params=params, headers=headers)
        return response.status_code, response.json()

    def ok(self, who: str, path: str, **params: Any) -> Any:
        status, body = self.get(who, path, **params)
        assert status == 200, body
        return body

    def every(self, who: str, path: str, **params: Any) -> list[Any]:
        """Follow next_cursor to the end."""
        items: list[Any] = []
        cursor = None
        while True:
            page = self.ok(who, path, **params, **({"cursor": cursor} if cursor else {}))
            items += page["items"]
            if page["next_cursor"] is None:
                return items
            assert len(page["items"]) == params.get("limit", 50)
            cursor = page["next_cursor"]


@pytest.fixture
async def api(isolated: Isolated, kafka: KafkaSettings, pool: asyncpg.Pool) -> Any:
    t = isolated.tenant
    await seed_audit_story(kafka, pool, t)
    tokens = {who: (await create_token(pool, tenant=t, principal=who))[1] for who in ("ana", "bo")}
    tokens["operator"] = (await create_token(pool, tenant=t, principal=None))[1]
    served = Api(isolated, tokens)
    with served.client:
        yield served


def _run(check: Any, *args: Any) -> Any:
    return asyncio.to_thread(check, *args)


async def test_belief_pages_follow_their_cursor_to_the_end_and_filters_narrow_them(
    api: Api,
) -> None:
    def check() -> None:
        everything = api.ok("ana", "/v1/beliefs", all="true", limit=500)["items"]
        assert len(everything) == 7 and everything == api.every(
            "ana", "/v1/beliefs", all="true", limit=2
        )
        current = api.every("ana", "/v1/beliefs", limit=1)
        assert {b["object"] for b in current} == {"Oslo", "concise answers", "Vim", "Git", "Make"}
        by = {
            "relation": api.every("ana", "/v1/beliefs", relation="uses", limit=2),
            "status": api.every("ana", "/v1/beliefs", status="superseded"),
            "type": api.every("ana", "/v1/beliefs", belief_type="preference"),
            "project": api.every("ana", "/v1/beliefs", project="kitchen"),
        }
        assert sorted(b["object"] for b in by["relation"]) == ["Git", "Make", "Vim"]
        assert sorted(b["object"] for b in by["status"]) == ["Lisbon", "Porto"]
        assert [b["object"] for b in by["type"]] == ["concise answers"]
        assert "Oslo" in {b["object"] for b in by["project"]}
        # Between the weakest and the strongest as decayed to now: values near either end
        # may round the other way by the next request, as the clock moves on.
        weakest, strongest = (f(b["effective_confidence"] for b in current) for f in (min, max))
        middle = (weakest + strongest) / 2
        confident = api.every("ana", "/v1/beliefs", min_confidence=middle)
        assert confident and all(b["effective_confidence"] >= middle for b in confident)
        assert len(confident) < len(current)
        for bad in ("not-a-cursor", _cursor_of(api, "/v1/runs")):
            status, body = api.get("ana", "/v1/beliefs", cursor=bad)
            assert status == 422, body
        assert api.ok("bo", "/v1/beliefs")["items"][0]["object"] == "Cork"

    await _run(check)


def _cursor_of(api: Api, path: str) -> str:
    """A real cursor handed out by another list."""
    page = api.ok("ana", path, limit=1)
    assert page["next_cursor"] is not None
    return str(page["next_cursor"])


async def test_a_belief_shows_its_whole_chain_its_evidence_and_the_run_that_formed_it(
    api: Api,
) -> None:
    def check() -> None:
        [oslo] = api.every("ana", "/v1/beliefs", relation="lives_in")
        detail = api.ok("ana", f"/v1/beliefs/{oslo['belief_id']}")
        assert [e["quote"] for e in detail["belief"]["evidence"]] == ["I live in Oslo"]
        assert sorted(h["object"] for h in detail["history"]) == ["Lisbon", "Porto"]
        run = detail["formed_by"]
        assert run["episode_id"] == detail["belief"]["evidence"][0]["episode_id"]
        assert run["session"] == "s2" and run["project"] == "garden"
        assert run["policy_version"] == detail["belief"]["policy_version"]
        assert run["counts"]["committed"] == 3
        assert api.get("bo", f"/v1/beliefs/{oslo['belief_id']}")[0] == 404

    await _run(check)


async def test_runs_list_with_their_counts_and_a_run_shows_what_it_formed_and_refused(
    api: Api,
) -> None:
    def check() -> None:
        runs = api.every("ana", "/v1/runs", limit=2)
        assert [r["source_offset"] for r in runs] == [0, 1, 2]
        assert [r["session"] for r in api.every("ana", "/v1/runs", session="s2")] == ["s2", "s2"]
        first = api.ok("ana", f"/v1/runs/{runs[0]['run_id']}")
        assert first["run"]["refusal_reasons"] == {"unmapped_relation": 1}
        assert sorted(b["relation"] for b in first["formed"]) == ["lives_in", "prefers"]
        assert [r["quote"] for r in first["refusals"]] == ["I dream of Mars"]
        assert first["freshness"]["project"] == "garden"
        second = api.ok("ana", f"/v1/runs/{runs[1]['run_id']}")
        assert [b["relation"] for b in second["reinforced"]] == ["prefers"]
        [bo_run] = api.every("bo", "/v1/runs")
        assert api.get("ana", f"/v1/runs/{bo_run['run_id']}")[0] == 404
        assert api.get("ana", f"/v1/runs/{uuid.uuid4()}")[0] == 404
        assert api.get("ana", "/v1/runs", principal="bo")[0] == 404

    await _run(check)


async def test_refusals_page_filter_and_count_by_reason_and_unmapped_relation(api: Api) -> None:
    def check() -> None:
        [mars] = api.every("ana", "/v1/refusals", limit=1)
        assert mars["reason"] == "unmapped_relation" and mars["quote"] == "I dream of Mars"
        assert api.every("ana", "/v1/refusals", reason="secret") == []
        assert api.get("ana", "/v1/refusals", reason="no_such_reason")[0] == 422
        # A NUL is no text PostgreSQL takes: refused naming the field, never a 500.
        assert api.get("ana", "/v1/refusals", relation="a\x00b")[0] == 422
        assert api.get("ana", "/v1/beliefs", belief_type="\x00")[0] == 422
        summary = api.ok("ana", "/v1/refusals/summary")
        assert summary == {
            "total": 1,
            "by_reason": [{"key": "unmapped_relation", "count": 1}],
            "by_unmapped_relation": [{"key": "dreams_of", "count": 1}],
        }
        assert api.ok("operator", "/v1/refusals/summary", principal="bo")["total"] == 1
        assert api.get("ana", "/v1/refusals/summary", principal="bo")[0] == 404

    await _run(check)


async def test_a_session_diagnosis_shows_what_formed_refused_and_parked_and_no_messages(
    api: Api,
) -> None:
    def check() -> None:
        s1 = api.ok("ana", "/v1/sessions/s1/diagnosis")
        assert [e["counts"]["refused"] for e in s1["episodes"]] == [1]
        assert s1["episodes"][0]["progress"] is None  # projected from claims alone
        assert sorted(f["relation"] for f in s1["formed"]) == ["lives_in", "prefers"]
        assert {q["quote"] for f in s1["formed"] for q in f["evidence"]} == {
            "I live in Lisbon",
            "I prefer concise answers",
        }
        assert s1["refused_by_reason"] == [{"key": "unmapped_relation", "count": 1}]
        text = str(s1)
        assert "Mars" not in text and "Cork" not in text and "Venus" not in text
        s2 = api.ok("ana", "/v1/sessions/s2/diagnosis")
        assert {q["episode_id"] for f in s2["formed"] for q in f["evidence"]} == {
            e["episode_id"] for e in s2["episodes"]
        }
        s3 = api.ok("ana", "/v1/sessions/s3/diagnosis")
        [parked] = s3["episodes"]
        assert s3["parked"] == 1 and parked["episode_id"] == str(PARKED_EPISODE)
        assert parked["progress"]["attempts"] == 3 and parked["run_id"] is None
        assert parked["progress"]["failure_kind"] == "model_timeout"
        bo = api.ok("bo", "/v1/sessions/s1/diagnosis")
        assert "Lisbon" not in str(bo) and len(bo["episodes"]) == 1
        assert api.get("bo", "/v1/sessions/s3/diagnosis")[0] == 404
        assert api.get("ana", "/v1/sessions/nowhere/diagnosis")[0] == 404
        assert api.get("ana", "/v1/sessions/s1/diagnosis", principal="bo")[0] == 404

    await _run(check)


async def test_the_user_model_holds_what_was_promoted_to_user_scope_and_only_the_callers(
    api: Api,
) -> None:
    def check() -> None:
        model = api.ok("ana", "/v1/user-model")
        assert [(e["relation"], e["value"], e["corroboration"]) for e in model["entries"]] == [
            ("prefers", "concise answers", 2)
        ]
        assert model["principal"] == "ana" and model["truncated"] is False
        assert api.ok("bo", "/v1/user-model")["entries"] == []
        assert api.get("ana", "/v1/user-model", principal="bo")[0] == 404
        assert api.ok("operator", "/v1/user-model", principal="ana") == model

    await _run(check)


async def test_the_client_pages_through_every_list_and_reads_every_audit(
    isolated: Isolated, kafka: KafkaSettings, pool: asyncpg.Pool
) -> None:
    t = isolated.tenant
    await seed_audit_story(kafka, pool, t)
    _, token = await create_token(pool, tenant=t, principal="ana")
    settings = Settings(
        kafka=isolated.kafka(),
        database=DatabaseSettings(url=isolated.database_url),
    )
    app = create_api(settings)
    transport = httpx.ASGITransport(app=app)
    async with (
        app.router.lifespan_context(app),
        AsyncEngram("http://engram", token=token, transport=transport) as ana,
    ):
        paged = [b async for b in every_item(ana.beliefs_page, all=True, limit=2)]
        assert len(paged) == 7 and [b.belief_id for b in paged] == [
            b.belief_id for b in await ana.beliefs(all=True)
        ]
        assert {b.object for b in await ana.beliefs(relation="uses", limit=1)} == {
            "Vim",
            "Git",
            "Make",
        }
        runs = await ana.runs(limit=1)
        assert len(runs) == 3
        assert (await ana.run(runs[0].run_id)).refusals[0].reason == "unmapped_relation"
        assert [r.relation for r in await ana.refusals(limit=1)] == ["dreams_of"]
        assert (await ana.refusal_summary()).total == 1
        assert (await ana.diagnosis("s3")).parked == 1
        assert [e.value for e in (await ana.user_model()).entries] == ["concise answers"]
        with pytest.raises(EngramError) as missing:
            await ana.diagnosis("s9")
        assert missing.value.status == 404
