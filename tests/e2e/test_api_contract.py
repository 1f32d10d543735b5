"""The committed OpenAPI document against the live API (a real ``engram api`` process):
schemathesis generates requests for every operation with the tokens of two principals and an
operator. No answer is a 500, every status and body is one the document declares, and no answer
to one principal's token ever carries the other principal's data — not even when the requests
aim straight at the other's belief ids, or search or recall the other's words.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path
from typing import Any

import asyncpg
import pytest
import schemathesis
from hypothesis import HealthCheck, given, settings
from schemathesis.checks import not_a_server_error
from schemathesis.core.result import Err
from schemathesis.specs.openapi.checks import (
    response_schema_conformance,
    status_code_conformance,
)

from engram.cli import OPENAPI_PATH
from engram.keys.kek import new_kek_text
from engram.service.tokens import create_token
from tests.support.http import first_ok, free_port
from tests.support.isolation import Isolated, running_engram
from tests.support.projecting import seed_two_principals

pytestmark = pytest.mark.e2e

EXAMPLES = 25
CHECKS = [not_a_server_error, status_code_conformance, response_schema_conformance]


async def _seed(isolated: Isolated, pool: asyncpg.Pool) -> dict[str, dict[str, str]]:
    """One belief each for ana and bo, with words found nowhere else; by principal, the ids
    of their belief and run and the name of their session."""
    t = isolated.tenant
    kafka = isolated.kafka(partitions=1)
    await seed_two_principals(kafka, pool, t)
    rows = await pool.fetch(
        "SELECT b.principal, b.belief_id, r.run_id, r.session FROM belief b "
        "JOIN consolidation_run r ON r.run_id = b.formation_run WHERE b.tenant = $1",
        t,
    )
    return {
        row["principal"]: {
            "belief_id": str(row["belief_id"]),
            "run_id": str(row["run_id"]),
            "session": row["session"],
        }
        for row in rows
    }


def _fuzz(
    url: str,
    token: str,
    overrides: dict[str, Any],
    leaked: Callable[[str, str], bool],
) -> list[str]:
    """Every operation, EXAMPLES cases each; returns the leaks found (checks raise). An answer
    leaks when it holds a marker of the other principal that the request did not send (a 404
    may repeat the id it was asked for)."""
    schema = schemathesis.openapi.from_path(str(OPENAPI_PATH))
    leaks: list[str] = []
    for result in schema.get_all_operations():
        if isinstance(result, Err):
            raise result.err()
        operation = result.ok()
        strategy = operation.as_strategy(**overrides.get(operation.path, {}))

        @settings(
            max_examples=EXAMPLES,
            deadline=None,
            database=None,
            suppress_health_check=list(HealthCheck),
        )
        @given(case=strategy)
        def check(case: Any) -> None:
            headers = {"Authorization": f"Bearer {token}"}
            response = case.call(base_url=url, headers=headers, timeout=30)
            case.validate_response(response, checks=CHECKS, headers=headers)
            sent = f"{case.formatted_path} {case.query} {case.body}"
            if leaked(response.text, sent):
                leaks.append(f"{case.method} {case.formatted_path}: {response.text[:200]}")

        check()
    return leaks


def _shows(markers: tuple[str, ...]) -> Callable[[str, str], bool]:
    def leaked(text: str, sent: str) -> bool:
        return any(marker in text and marker not in sent for marker in markers)

    return leaked


async def test_the_live_api_keeps_its_contract_and_each_principal_to_their_own(
    isolated: Isolated, pool: asyncpg.Pool, tmp_path: Path
) -> None:
    ids = await _seed(isolated, pool)
    t = isolated.tenant
    tokens = {who: (await create_token(pool, tenant=t, principal=who))[1] for who in ("ana", "bo")}
    _, operator = await create_token(pool, tenant=t, principal=None)
    port = free_port()
    # with a KEK, so /v1/webhooks registers (a process without one answers those routes 503)
    env = {**isolated.env(), "ENGRAM_API_PORT": str(port), "ENGRAM_KEYS_KEK": new_kek_text()}
    url = f"http://127.0.0.1:{port}"
    words = {
        who: (city, ids[who]["belief_id"], ids[who]["run_id"])
        for who, city in (("ana", "Lisbon"), ("bo", "Cork"))
    }
    # What waits (a watermark, an erasure's receipt) answers at once: no worker runs here.
    quick = {
        "/v1/freshness": {"query": {"timeout_s": 0.2}},
        "/v1/erasures/{event_id}": {"query": {"timeout_s": 0}},
        "/v1/principals/{principal}": {"query": {"wait_s": 0}},
    }
    with running_engram(isolated, "api", log_path=tmp_path / "api.log", env=env):
        await first_ok(f"{url}/healthz")
        for who, other in (("ana", "bo"), ("bo", "ana")):
            aimed: dict[str, Any] = {
                path: {"path_parameters": {"belief_id": ids[other]["belief_id"]}}
                for path in ("/v1/beliefs/{belief_id}", "/v1/beliefs/{belief_id}/corrections")
            }
            aimed["/v1/runs/{run_id}"] = {"path_parameters": {"run_id": ids[other]["run_id"]}}
            # Both sessions are named alike: aimed at that name, each must see only their own.
            for read in ("diagnosis", "messages"):
                aimed[f"/v1/sessions/{{session}}/{read}"] = {
                    "path_parameters": {"session": ids[other]["session"]}
                }
            # Searching for the other's words: their belief's id would give a leak away.
            aimed["/v1/search"] = {"query": {"q": words[other][0]}}
            aimed["/v1/recall"] = {"query": {"q": words[other][0]}}
            for overrides in (quick, {**quick, **aimed}):
                leaks = await asyncio.to_thread(
                    _fuzz,
                    url,
                    tokens[who],
                    overrides,
                    _shows(words[other]),
                )
                assert leaks == [], f"{who}'s token saw {other}'s data: {leaks[:3]}"
        assert (
            await asyncio.to_thread(_fuzz, url, operator, quick, lambda _text, _sent: False) == []
        )
    log = (tmp_path / "api.log").read_text(errors="replace")
    assert "Traceback" not in log, log[-2000:]
