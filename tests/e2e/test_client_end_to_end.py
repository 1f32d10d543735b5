"""The whole product path as an agent runtime sees it: turns over HTTP (the client) → the log →
a real worker → PostgreSQL → read back, corrected and deleted through the client; the API and
the worker run as real ``engram`` subprocesses."""

from __future__ import annotations

import asyncio
from datetime import timedelta
from pathlib import Path

import asyncpg
import pytest

from engram.client import AsyncEngram, Engram, EngramError
from engram.service.tokens import create_token
from tests.support.conditions import wait_until
from tests.support.episodes import EPOCH, turn
from tests.support.http import first_ok, free_port
from tests.support.isolation import Isolated, running_engram, running_worker

pytestmark = pytest.mark.e2e


async def test_turns_appended_through_the_client_form_and_read_back_scoped_to_their_principal(
    isolated: Isolated, pool: asyncpg.Pool, tmp_path: Path
) -> None:
    t = isolated.tenant
    _, ana_token = await create_token(pool, tenant=t, principal="ana")
    _, bo_token = await create_token(pool, tenant=t, principal="bo")
    port = free_port()
    env = {**isolated.env(), "ENGRAM_API_PORT": str(port)}
    url = f"http://127.0.0.1:{port}"
    lisbon = turn(t, "ana", "garden", "I live in Lisbon and I prefer dark mode.", seq=0)
    with (
        running_engram(isolated, "api", log_path=tmp_path / "api.log", env=env),
        running_worker(isolated, log_path=tmp_path / "worker.log"),
    ):
        await first_ok(f"{url}/healthz")
        async with (
            AsyncEngram(url, token=ana_token) as ana,
            AsyncEngram(url, token=bo_token) as bo,
        ):
            [where] = await ana.append_turns([lisbon])
            [again] = await ana.append_turns([lisbon])  # the same event_id, appended twice
            assert again.offset > where.offset and again.partition == where.partition
            fresh = await ana.wait_formed(again, timeout_s=90)
            assert fresh.formed_offset is not None and fresh.formed_offset >= again.offset

            beliefs = await ana.beliefs()
            lives = [b for b in beliefs if b.relation == "lives_in"]
            assert [b.object for b in lives] == ["Lisbon"], "a duplicate forms once"
            assert [e.quote for e in lives[0].evidence] == ["I live in Lisbon"]
            runs = await pool.fetchval(
                "SELECT count(*) FROM consolidation_run WHERE episode_id = $1", lisbon.event_id
            )
            assert runs == 1
            found = await ana.search("living in Lisbon")
            assert [h.belief.belief_id for h in found.hits] == [lives[0].belief_id]
            assert found.hits[0].belief.evidence[0].quote == "I live in Lisbon"
            assert (await bo.search("Lisbon")).hits == []

            async def indexed() -> bool:
                return (await ana.freshness("garden")).index_lag_episodes == 0

            await wait_until(indexed, timeout_s=60, what="the message index reads the turns")
            recalled = await ana.recall("Do I live in Lisbon?", roles=("user", "assistant"))
            kinds = [
                (h.kind, h.belief.object if h.kind == "belief" else h.content)
                for h in recalled.hits
            ]
            assert kinds == [
                ("belief", "Lisbon"),
                ("message", "I live in Lisbon and I prefer dark mode."),
            ]
            assert (await bo.recall("Lisbon dark mode")).hits == []
            said_then = await ana.recall(
                "yesterday", asked_at=EPOCH + timedelta(days=1), semantic=False
            )
            assert [h.content for h in said_then.hits if h.kind == "message"] == [
                "I live in Lisbon and I prefer dark mode."
            ]

            with pytest.raises(EngramError) as refused:
                await bo.belief(lives[0].belief_id)
            assert refused.value.status == 404
            with pytest.raises(EngramError) as refused:
                await bo.append_turns([turn(t, "ana", "garden", "I live in Oslo.", seq=1)])
            assert refused.value.status == 403
            assert await bo.beliefs() == []

            remembered = await ana.remember(
                "I am allergic to peanuts.", project="garden", principal="ana"
            )
            corrected = await ana.correct(lives[0].belief_id, "changed", replacement="Porto")
            await ana.wait_formed(remembered, timeout_s=60)
            await ana.wait_formed(corrected, timeout_s=60)
            now = {(b.relation, b.object) for b in await ana.beliefs()}
            assert ("lives_in", "Porto") in now and ("lives_in", "Lisbon") not in now

        def blocking() -> tuple[list[str], list[str], str]:
            """The blocking client: read, delete, wait, read again."""
            with Engram(url, token=ana_token) as engram:
                before = [b for b in engram.beliefs() if b.relation == "lives_in"]
                assert [h.belief.object for h in engram.search("Porto").hits] == ["Porto"]
                engram.wait_formed(engram.delete(before[0].belief_id), timeout_s=60)
                after = [b.object for b in engram.beliefs() if b.relation == "lives_in"]
                return [b.object for b in before], after, engram.freshness("garden").project

        assert await asyncio.to_thread(blocking) == (["Porto"], [], "garden")
