"""The health relation on real Kafka and PostgreSQL (issue 27, item 4): ``has_condition`` is
stored only under a policy that enables it, flagged, ``local``, and never promoted to the user
scope even when told in two projects; under the default policy only a redacted refusal is
stored."""

from __future__ import annotations

import asyncpg
import pytest

from engram.formation.policy import RELATION_NAMES, FormationPolicy
from engram.infra.settings import KafkaSettings
from engram.projections.reads.queries import list_beliefs, list_refusals
from tests.support.episodes import turn
from tests.support.isolation import Isolated
from tests.support.projecting import batch_of, claim, project_all

pytestmark = pytest.mark.integration

HEALTH_ON = FormationPolicy(enabled_relations=RELATION_NAMES)


async def test_health_told_in_two_projects_stays_local_flagged_and_unpromoted(
    isolated: Isolated, kafka: KafkaSettings, pool: asyncpg.Pool
) -> None:
    t = isolated.tenant
    said = "I have asthma."
    await project_all(
        kafka,
        pool,
        [
            batch_of(
                turn(t, "ana", project, said, seq=seq),
                claim("I", "has_condition", "asthma", "I have asthma"),
                offset=seq,
                policy=HEALTH_ON,
            )
            for seq, project in enumerate(("garden", "kitchen"))
        ],
    )
    [belief] = await list_beliefs(pool, tenant=t, principal="ana")
    assert (belief.object, belief.portability) == ("asthma", "local")
    assert belief.scope == "project:garden"  # told again in the kitchen: reinforced, not promoted
    assert belief.sensitivity == ["health"]
    assert belief.flagged_for_review
    model = await pool.fetch(
        "SELECT value FROM user_model WHERE tenant = $1 AND principal = 'ana'", t
    )
    assert model == []
    events = await pool.fetch(
        "SELECT payload->>'type' AS type FROM memory_event_outbox WHERE tenant = $1", t
    )
    assert "memory.promoted" not in [e["type"] for e in events]


async def test_under_the_default_policy_only_a_redacted_refusal_is_stored(
    isolated: Isolated, kafka: KafkaSettings, pool: asyncpg.Pool
) -> None:
    t = isolated.tenant
    await project_all(
        kafka,
        pool,
        [
            batch_of(
                turn(t, "ana", "garden", "I have asthma.", seq=0),
                claim("I", "has_condition", "asthma", "I have asthma"),
            )
        ],
    )
    assert await list_beliefs(pool, tenant=t, principal="ana") == []
    [refusal] = await list_refusals(pool, tenant=t, principal="ana")
    assert refusal.relation == "has_condition"
    assert refusal.statement == refusal.quote == "[redacted:health]"
