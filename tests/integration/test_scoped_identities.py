"""An event id is unique within its tenant, not across tenants (issue 25, item 3): on the real
broker and database, two tenants — and two principals of one tenant, and one principal's two
projects — whose producers use the same ``event_id`` all form their beliefs, runs and refusals,
and the same episode appended twice still forms once.

Before identities named the episode's scope, the second episode's claims batch had the first's
id: the projector skipped it as applied and marked it formed, so freshness moved and nothing
formed — no belief, no run, no refusal.
"""

from __future__ import annotations

import uuid
from pathlib import Path

import asyncpg
import pytest

from engram.ingest.producer import EpisodeProducer
from engram.ingest.topics import ensure_topics
from engram.projections.beliefs.digest import projection_digest
from engram.projections.reads.queries import list_beliefs, list_refusals
from engram.schemas.episodes import TurnAppended
from engram.watermarks.waiting import wait_for_watermarks
from tests.support.episodes import turn
from tests.support.isolation import Isolated, running_worker

pytestmark = pytest.mark.integration

SHARED = uuid.UUID("5eed0000-0000-4000-8000-000000000025")
"""The event id every producer below uses."""
ASSISTANT = "Noted: I prefer tea."
"""A first-person claim in an assistant message: refused (not spoken by the principal)."""


def _said(tenant: str, principal: str, city: str, project: str = "p") -> TurnAppended:
    said = turn(
        tenant, principal, project, f"I live in {city}.", ASSISTANT, roles=("user", "assistant")
    )
    return said.model_copy(update={"event_id": SHARED})


async def test_the_same_event_id_forms_in_every_tenant_and_principal_and_once_in_each(
    isolated: Isolated, pool: asyncpg.Pool, tmp_path: Path
) -> None:
    first, second = isolated.tenant, f"{isolated.tenant}-b"
    lisbon = _said(first, "ana", "Lisbon")
    oslo = _said(second, "ana", "Oslo")  # another tenant, the same event id
    porto = _said(first, "bo", "Porto")  # another principal of the first tenant, the same id
    # One principal saying the same in two projects under the same event id: two episodes.
    rome = [_said(second, "cy", "Rome", project) for project in ("p", "q")]
    episodes = [lisbon, oslo, porto, lisbon, *rome]  # Lisbon's appended twice (a retry)
    kafka = isolated.kafka()
    await ensure_topics(kafka)
    async with EpisodeProducer(kafka) as producer:
        appended = [await producer.publish(e) for e in episodes]
    assert len({(a.partition, a.offset) for a in appended}) == len(episodes)

    with running_worker(isolated, log_path=tmp_path / "worker.log"):
        await wait_for_watermarks(pool, appended, timeout_s=90)

    for tenant, principal, city in [
        (first, "ana", "Lisbon"),
        (second, "ana", "Oslo"),
        (first, "bo", "Porto"),
    ]:
        beliefs = await list_beliefs(pool, tenant=tenant, principal=principal)
        assert [(b.relation, b.object) for b in beliefs] == [("lives_in", city)], (
            tenant,
            principal,
        )
        [belief] = beliefs
        assert belief.corroboration == 1  # the copy appended again did not reinforce it
        assert [(e.episode_id, e.quote) for e in belief.evidence] == [(SHARED, f"I live in {city}")]
        refusals = await list_refusals(pool, tenant=tenant, principal=principal)
        assert [(r.episode_id, r.reason, r.role) for r in refusals] == [
            (SHARED, "not_spoken_by_principal", "assistant")
        ], (tenant, principal)

    [belief] = await list_beliefs(pool, tenant=second, principal="cy")
    assert (belief.object, belief.corroboration) == ("Rome", 2)
    cited = await pool.fetch(
        "SELECT project, episode_id FROM evidence WHERE belief_id = $1 ORDER BY project",
        belief.belief_id,
    )
    assert [(r["project"], r["episode_id"]) for r in cited] == [("p", SHARED), ("q", SHARED)]
    refusals = await list_refusals(pool, tenant=second, principal="cy")
    assert [(r.episode_id, r.reason) for r in refusals] == [(SHARED, "not_spoken_by_principal")] * 2

    runs = await pool.fetch(
        "SELECT tenant, principal, project, episode_id, count(*) AS n FROM consolidation_run "
        "GROUP BY tenant, principal, project, episode_id ORDER BY tenant, principal, project"
    )
    assert [tuple(r.values()) for r in runs] == [
        (first, "ana", "p", SHARED, 1),
        (first, "bo", "p", SHARED, 1),
        (second, "ana", "p", SHARED, 1),
        (second, "cy", "p", SHARED, 1),
        (second, "cy", "q", SHARED, 1),
    ]
    # Every row's links hold (a digest refuses a projection with a broken one).
    assert await projection_digest(pool)
