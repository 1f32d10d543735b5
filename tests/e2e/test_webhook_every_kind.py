"""Every kind of change docs/notifications.md lists reaches an endpoint: each test goes through a
door (the API's `/v1/turns`, corrections, `DELETE` of a belief and of a principal; `engram
webhooks test`), then waits for a delivery of that kind on a real receiver on loopback, verified
with the published `standardwebhooks` library. One `engram worker` (formation, projector,
notifier) and one API serve the whole module; each test speaks as a principal of its own."""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import subprocess
import sys
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import asyncpg
import pytest
from fastapi.testclient import TestClient

from engram.api import create_api
from engram.infra.settings import DatabaseSettings, Settings, WebhooksSettings
from engram.ingest.topics import ensure_topics
from engram.projections.reads.queries import list_beliefs
from engram.service.tokens import create_token
from tests.support.conditions import wait_until
from tests.support.databases import create_database, drop_database
from tests.support.episodes import turn
from tests.support.isolation import REPO, Isolated, delete_topics, new_prefix, running_worker
from tests.support.services import find_services
from tests.support.webhook_receiver import Received, Receiver

pytestmark = pytest.mark.e2e

WAIT_S = 120
EVERY_KIND = [
    "memory.formed",
    "memory.reinforced",
    "memory.superseded",
    "memory.conflicted",
    "memory.promoted",
    "memory.corrected",
    "memory.deleted",
    "principal.forgotten",
    "project.formed_through",
]


@dataclass
class Stack:
    isolated: Isolated
    pool: asyncpg.Pool
    client: TestClient
    receiver: Receiver
    env: dict[str, str]
    endpoint_id: str
    operator: str

    @property
    def tenant(self) -> str:
        return self.isolated.tenant

    async def call(self, method: str, path: str, token: str, **kwargs: Any) -> Any:
        headers = {"Authorization": f"Bearer {token}"}
        answer = await asyncio.to_thread(
            self.client.request, method, path, headers=headers, **kwargs
        )
        assert answer.status_code in (200, 201, 202), (path, answer.status_code, answer.text)
        return answer.json()

    async def say(self, principal: str, project: str, text: str, *, seq: int, **msg: str) -> None:
        """A turn through `POST /v1/turns`, with the operator's token (it names whose it is)."""
        body = turn(self.tenant, principal, project, text, seq=seq).model_dump(mode="json")
        body["messages"][0].update(msg)
        await self.call("POST", "/v1/turns", self.operator, json=body)

    async def belief(self, principal: str, word: str) -> str:
        """The id of the current belief of ``principal`` whose object holds ``word``, once
        formed."""
        found: list[str] = []

        async def formed() -> bool:
            beliefs = await list_beliefs(self.pool, tenant=self.tenant, principal=principal)
            found[:] = [str(b.belief_id) for b in beliefs if word.lower() in b.object.lower()]
            return bool(found)

        await wait_until(formed, timeout_s=WAIT_S, what=f"a belief of {principal} about {word}")
        return found[0]

    async def delivered(self, kind: str, **data: str) -> Received:
        """The first verified delivery of ``kind`` whose data holds ``data``."""

        def matching() -> list[Received]:
            return [
                r
                for r in self.receiver.of_type(kind)
                if all(r.payload["data"].get(k) == v for k, v in data.items())
            ]

        await wait_until(
            lambda: bool(matching()), timeout_s=WAIT_S, what=f"a signed {kind} with {data}"
        )
        received = matching()[0]
        assert received.verified and received.headers["webhook-signature"].startswith("v1,")
        return received


@contextlib.contextmanager
def _api(settings: Settings) -> Iterator[TestClient]:
    with TestClient(create_api(settings)) as client:
        yield client


@pytest.fixture(scope="module")
async def stack(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[Stack]:
    services = find_services()
    name = f"engram_{new_prefix()}"
    url = await create_database(services.database_url, name)
    isolated = Isolated(new_prefix(), services.bootstrap, url, partitions=1)
    await ensure_topics(isolated.kafka())
    pool = await asyncpg.create_pool(url, min_size=1, max_size=4)
    assert pool is not None
    receiver = await Receiver().start()
    env = {
        **isolated.env(),
        "ENGRAM_WEBHOOKS_ALLOW_PRIVATE": "true",
        "ENGRAM_WEBHOOKS_POLL_S": "0.2",
    }
    settings = Settings(
        kafka=isolated.kafka(),
        database=DatabaseSettings(url=url),
        keys=isolated.keys(),
        webhooks=WebhooksSettings(allow_private=True),
    )
    log_path = tmp_path_factory.mktemp("every-kind") / "worker.log"
    try:
        with _api(settings) as client, running_worker(isolated, log_path=log_path, env=env):
            _, operator = await create_token(pool, tenant=isolated.tenant, principal=None)
            created = await asyncio.to_thread(
                client.post,
                "/v1/webhooks",
                json={"project": "garden", "url": receiver.url, "events": [*EVERY_KIND]},
                headers={"Authorization": f"Bearer {operator}"},
            )
            assert created.status_code == 201, created.text
            receiver.secret = created.json()["secret"]
            yield Stack(isolated, pool, client, receiver, env, created.json()["id"], operator)
            assert receiver.received == receiver.verified()  # nothing unsigned, ever
    finally:
        await receiver.stop()
        await pool.close()
        await delete_topics(services.bootstrap, isolated.prefix)
        await drop_database(services.database_url, name)


async def test_a_turn_is_memory_formed_and_project_formed_through(stack: Stack) -> None:
    await stack.say("ana", "garden", "I live in Lisbon.", seq=1)
    belief = await stack.belief("ana", "lisbon")
    formed = await stack.delivered("memory.formed", principal="ana", belief_id=belief)
    assert formed.payload["data"]["project"] == "garden"
    await stack.delivered("project.formed_through", project="garden")


async def test_saying_it_again_is_memory_reinforced(stack: Stack) -> None:
    await stack.say("bo", "garden", "I use Vim.", seq=1)
    belief = await stack.belief("bo", "vim")
    await stack.delivered("memory.formed", principal="bo", belief_id=belief)
    await stack.say("bo", "garden", "I use Vim.", seq=2)
    await stack.delivered("memory.reinforced", principal="bo", belief_id=belief)


async def test_saying_it_in_a_second_project_is_memory_promoted(stack: Stack) -> None:
    await stack.say("cy", "orchard", "I prefer tea.", seq=1)
    belief = await stack.belief("cy", "tea")
    await stack.say("cy", "garden", "I prefer tea.", seq=2)
    await stack.delivered("memory.promoted", principal="cy", belief_id=belief, project="garden")


async def test_a_new_value_is_memory_superseded(stack: Stack) -> None:
    await stack.say("di", "garden", "I live in Lisbon.", seq=1)
    old = await stack.belief("di", "lisbon")
    await stack.say("di", "garden", "I live in Porto.", seq=2)
    await stack.delivered("memory.superseded", principal="di", belief_id=old)


async def test_a_weaker_rival_value_is_memory_conflicted(stack: Stack) -> None:
    await stack.say("ed", "garden", "I live in Oslo.", seq=1)
    current = await stack.belief("ed", "oslo")
    # an affirmed message (not the owner's own) may not replace the owner's value
    await stack.say("ed", "garden", "I live in Riga.", seq=2, trust="affirmed")
    await stack.delivered("memory.conflicted", principal="ed", belief_id=current)


async def test_a_correction_is_memory_corrected(stack: Stack) -> None:
    await stack.say("flo", "garden", "I work at Initech.", seq=1)
    belief = await stack.belief("flo", "initech")
    _, token = await create_token(stack.pool, tenant=stack.tenant, principal="flo")
    await stack.call("POST", f"/v1/beliefs/{belief}/corrections", token, json={"kind": "untrue"})
    await stack.delivered("memory.corrected", principal="flo", belief_id=belief)


async def test_deleting_a_belief_is_memory_deleted(stack: Stack) -> None:
    await stack.say("gus", "garden", "I use Emacs.", seq=1)
    belief = await stack.belief("gus", "emacs")
    await stack.delivered("memory.formed", principal="gus", belief_id=belief)
    _, token = await create_token(stack.pool, tenant=stack.tenant, principal="gus")
    receipt = await stack.call("DELETE", f"/v1/beliefs/{belief}?wait_s=60", token)
    assert receipt["kind"] == "belief.deleted"
    deleted = await stack.delivered("memory.deleted", principal="gus", belief_id=belief)
    assert deleted.payload["data"]["project"] == "garden"
    # and it went to the topic through the outbox, like every memory event
    published = await stack.pool.fetchval(
        "SELECT count(*) FROM memory_event_outbox o LEFT JOIN memory_event_pending p "
        "USING (event_id) WHERE o.payload->>'type' = 'memory.deleted' "
        "AND o.payload->>'belief_id' = $1 AND p.event_id IS NULL",
        belief,
    )
    assert published == 1


async def test_deleting_with_the_cli_is_memory_deleted(stack: Stack) -> None:
    await stack.say("hal", "garden", "I live in Cork.", seq=1)
    belief = await stack.belief("hal", "cork")
    done = await asyncio.to_thread(
        _engram, stack.env, "beliefs", "delete", belief, "--tenant", stack.tenant,
        "--principal", "hal", "--wait",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    await stack.delivered("memory.deleted", principal="hal", belief_id=belief)


async def test_forgetting_is_principal_forgotten(stack: Stack) -> None:
    await stack.say("ivy", "garden", "I live in Turin.", seq=1)
    await stack.belief("ivy", "turin")
    _, token = await create_token(stack.pool, tenant=stack.tenant, principal="ivy")
    receipt = await stack.call("DELETE", "/v1/principals/ivy?wait_s=60", token)
    assert receipt["kind"] == "principal.forgotten"
    digest = hashlib.sha256(f"{stack.tenant}/ivy".encode()).hexdigest()
    await stack.delivered("principal.forgotten", principal_hash=digest)


async def test_engram_webhooks_test_is_webhook_test(stack: Stack) -> None:
    done = await asyncio.to_thread(
        _engram, stack.env, "webhooks", "test", stack.endpoint_id, "--tenant", stack.tenant
    )
    assert done.returncode == 0, done.stderr
    await stack.delivered("webhook.test", endpoint_id=stack.endpoint_id)


def _engram(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "engram", *args],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=WAIT_S,
        check=False,
    )


def test_every_kind_the_docs_list_has_a_test_here() -> None:
    """The table of docs/notifications.md, kind by kind, against this module's tests."""
    docs = (REPO / "docs" / "notifications.md").read_text(encoding="utf-8")
    listed = set(EVERY_KIND) | {"webhook.test"}
    for kind in ("reinforced", "superseded", "conflicted", "promoted", "corrected", "deleted"):
        assert f"`.{kind}`" in docs
    for kind in ("memory.formed", "principal.forgotten", "project.formed_through", "webhook.test"):
        assert f"`{kind}`" in docs
    tested = Path(__file__).read_text(encoding="utf-8")
    for kind in listed:
        assert f'delivered("{kind}"' in tested, kind
