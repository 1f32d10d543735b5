"""A model built without validation is the one validation builds: equal, serialised
alike, with the same fields set. This is where a pydantic release that changes a model's
internals shows, before a memory event goes out wrong."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime

from engram.formation.trusted import unvalidated
from engram.resolution.events import memory_events
from engram.resolution.outcome import BatchOutcome
from engram.schemas.memory_events import MemoryChanged
from tests.support.episodes import turn
from tests.support.projecting import batch_of, claim


def _values() -> dict[str, object]:
    return {
        "schema_version": 1,
        "type": "memory.reinforced",
        "event_id": uuid.UUID(int=1),
        "tenant": "t",
        "principal": "ana",
        "belief_id": uuid.UUID(int=2),
        "run_id": uuid.UUID(int=3),
        "episode_id": uuid.UUID(int=4),
        "occurred_at": datetime(2026, 1, 1, 12, 30, 15, 250, tzinfo=UTC),
        "policy_version": "formation@1",
        "related_belief_id": None,
        "project": "garden",
    }


def test_an_unvalidated_model_equals_the_validated_one_and_serialises_alike() -> None:
    made, validated = unvalidated(MemoryChanged, _values()), MemoryChanged.model_validate(_values())
    assert made == validated
    assert made.model_dump_json() == validated.model_dump_json()
    assert made.model_fields_set == validated.model_fields_set
    assert made.model_copy(update={"tenant": "u"}).tenant == "u"


def test_resolutions_memory_events_validate_as_the_contract_says() -> None:
    batch = batch_of(
        turn("t", "ana", "p", "I use Vim", seq=1), claim("I", "uses", "Vim", "I use Vim")
    )
    outcome = BatchOutcome(created=[uuid.UUID(int=9)], reinforced=[uuid.UUID(int=10)])
    for event in memory_events(batch, outcome):
        checked = MemoryChanged.model_validate_json(event.model_dump_json())
        assert checked == event and checked.model_dump_json() == event.model_dump_json()
