"""Confidence through the read API: the stored value next to the value decayed to the time of
reading, and ``min_confidence`` filtering on the decayed one — over beliefs the real projector
wrote from real Kafka into PostgreSQL."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta
from typing import Any

import asyncpg
import pytest
from fastapi.testclient import TestClient

from engram.api import create_api
from engram.formation.policy import FormationPolicy
from engram.infra.settings import ApiSettings, DatabaseSettings, KafkaSettings, Settings
from engram.schemas.episodes import TurnAppended
from tests.support.episodes import turn
from tests.support.isolation import Isolated
from tests.support.projecting import batch_of, claim, project_all

pytestmark = pytest.mark.e2e

NOW = datetime.now(UTC)
POLICY = FormationPolicy()


def _said(tenant: str, text: str, seq: int, days_ago: float) -> TurnAppended:
    episode = turn(tenant, "ana", "p", text, seq=seq, session=f"s{seq}")
    return episode.model_copy(update={"occurred_at": NOW - timedelta(days=days_ago)})


def _get(isolated: Isolated, kafka: KafkaSettings, query: str) -> list[dict[str, Any]]:
    settings = Settings(
        kafka=kafka,
        database=DatabaseSettings(url=isolated.database_url),
        api=ApiSettings(dev_mode=True),
    )
    with TestClient(create_api(settings)) as client:
        response = client.get(f"/v1/beliefs?tenant={isolated.tenant}&principal=ana&{query}")
    assert response.status_code == 200, response.text
    items: list[dict[str, Any]] = response.json()["items"]
    return items


async def test_min_confidence_filters_on_the_confidence_decayed_to_the_time_of_reading(
    isolated: Isolated, kafka: KafkaSettings, pool: asyncpg.Pool
) -> None:
    t = isolated.tenant
    await project_all(
        kafka,
        pool,
        [
            batch_of(
                _said(t, "I prefer tea.", 0, days_ago=1),
                claim("I", "prefers", "tea", "I prefer tea"),
            ),
            batch_of(
                _said(t, "I prefer jazz.", 1, days_ago=720),
                claim("I", "prefers", "jazz", "I prefer jazz"),
                offset=1,
            ),
            batch_of(
                _said(t, "The project status is green.", 2, days_ago=30),
                claim("the project", "has_status", "green", "The project status is green"),
                offset=2,
            ),
        ],
    )
    everything = {b["object"]: b for b in await asyncio.to_thread(_get, isolated, kafka, "")}
    tea, jazz, green = everything["tea"], everything["jazz"], everything["green"]
    # Stored confidence is what the evidence earned; the effective one is decayed by type.
    assert tea["confidence"] == jazz["confidence"] == POLICY.first_person_confidence
    assert POLICY.first_person_confidence - 0.01 < tea["effective_confidence"] < 0.55
    assert jazz["effective_confidence"] == POLICY.confidence_floor  # four half-lives: the floor
    assert green["effective_confidence"] == 0.0  # a transient state, past its expiry

    fresh = await asyncio.to_thread(_get, isolated, kafka, "min_confidence=0.3")
    assert [b["object"] for b in fresh] == ["tea"]
    assert await asyncio.to_thread(_get, isolated, kafka, "min_confidence=0") != []

    # As of a day after jazz was said, it was nearly as strong as when said, and tea unsaid.
    then = (NOW - timedelta(days=719)).isoformat().replace("+00:00", "Z")
    back_then = await asyncio.to_thread(_get, isolated, kafka, f"as_of={then}&min_confidence=0.5")
    assert [b["object"] for b in back_then] == ["jazz"]


async def test_a_min_confidence_outside_zero_to_one_is_refused(
    isolated: Isolated, kafka: KafkaSettings
) -> None:
    settings = Settings(
        kafka=kafka,
        database=DatabaseSettings(url=isolated.database_url),
        api=ApiSettings(dev_mode=True),
    )

    def get() -> int:
        with TestClient(create_api(settings)) as client:
            path = f"/v1/beliefs?tenant={isolated.tenant}&principal=ana&min_confidence=1.5"
            return client.get(path).status_code

    assert await asyncio.to_thread(get) == 422
