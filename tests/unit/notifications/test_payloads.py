"""Notifications carry ids, offsets and times, never a statement, a quote or a message."""

from __future__ import annotations

import json
import uuid
from datetime import UTC, datetime
from typing import Any

from engram.notifications.owed import MemoryRecord, _Endpoint, owed_by
from engram.notifications.payloads import delivery_id, formed_body, ping_body
from engram.schemas.common import principal_hash
from engram.schemas.export import rendered_schemas
from engram.schemas.memory_events import MemoryChanged, PrincipalErased
from engram.schemas.webhooks import notification_adapter

WHEN = datetime(2026, 1, 1, tzinfo=UTC)
TOPIC = "engram.memory-events"


def _changed(
    kind: str = "memory.formed", project: str | None = "garden", n: int = 1
) -> MemoryChanged:
    return MemoryChanged(
        type=kind,
        event_id=uuid.UUID(int=n),
        tenant="t",
        principal="ana",
        belief_id=uuid.UUID(int=100 + n),
        run_id=uuid.UUID(int=200 + n),
        episode_id=uuid.UUID(int=300 + n),
        occurred_at=WHEN,
        policy_version="formation@1",
        project=project,
    )


def _record(event: MemoryChanged | PrincipalErased, offset: int = 0) -> MemoryRecord:
    return MemoryRecord(TOPIC, 0, offset, int(WHEN.timestamp() * 1000) + 1, event)


def _endpoint(project: str = "garden", events: tuple[str, ...] = ("memory.formed",)) -> _Endpoint:
    return _Endpoint(uuid.UUID(int=7), "t", project, frozenset(events), WHEN)


def _strings_without_a_shape(schema: dict[str, Any]) -> list[str]:
    """Every string property of a JSON Schema that is neither an enum, a constant, a pattern
    nor a format (uuid, date-time): the only places free text could travel."""
    free: list[str] = []

    def walk(node: Any, path: str) -> None:
        if isinstance(node, dict):
            if node.get("type") == "string" and not (
                {"enum", "const", "pattern", "format"} & node.keys()
            ):
                free.append(path)
            for key, value in node.items():
                walk(value, f"{path}/{key}")
        elif isinstance(node, list):
            for i, value in enumerate(node):
                walk(value, f"{path}/{i}")

    walk(schema, "")
    return free


def test_the_only_free_string_of_any_notification_is_the_topic_name() -> None:
    schema = json.loads(rendered_schemas()["webhook.v1.json"])
    assert _strings_without_a_shape(schema) == ["/$defs/MemoryEventPosition/properties/topic"]


def test_a_memory_event_owes_its_projects_endpoints_a_body_of_ids() -> None:
    owed = owed_by([_record(_changed())], [_endpoint(), _endpoint("other")], set())
    assert len(owed) == 1
    body = notification_adapter.validate_json(owed[0].payload)
    assert body.type == "memory.formed"
    assert json.loads(owed[0].payload)["data"] == {
        "event_id": str(uuid.UUID(int=1)),
        "tenant": "t",
        "principal": "ana",
        "project": "garden",
        "belief_id": str(uuid.UUID(int=101)),
        "log_position": {"topic": TOPIC, "partition": 0, "offset": 0},
        "occurred_at": "2026-01-01T00:00:00Z",
    }


def test_what_is_owed_follows_kind_project_tenant_registration_and_forgetting() -> None:
    records = [_record(_changed("memory.reinforced", n=2), 1), _record(_changed(n=3), 2)]
    assert [o.event_type for o in owed_by(records, [_endpoint()], set())] == ["memory.formed"]
    assert owed_by(records, [_endpoint()], {("t", "ana")}) == []
    assert owed_by([_record(_changed(project=None))], [_endpoint()], set()) == []
    later = _Endpoint(
        uuid.UUID(int=8),
        "t",
        "garden",
        frozenset({"memory.formed"}),
        datetime(2027, 1, 1, tzinfo=UTC),
    )
    assert owed_by(records, [later], set()) == []
    other_tenant = _Endpoint(uuid.UUID(int=9), "u", "garden", frozenset({"memory.formed"}), WHEN)
    assert owed_by(records, [other_tenant], set()) == []


def test_a_forgetting_is_owed_to_every_project_of_the_tenant_even_after_the_tombstone() -> None:
    erased = PrincipalErased(
        event_id=uuid.UUID(int=5),
        tenant="t",
        principal_hash=principal_hash("t", "ana"),
        episode_id=uuid.UUID(int=6),
        occurred_at=WHEN,
    )
    endpoints = [
        _endpoint("garden", ("principal.forgotten",)),
        _endpoint("atlas", ("principal.forgotten",)),
        _endpoint("ledger", ("memory.formed",)),
    ]
    owed = owed_by([_record(erased)], endpoints, {("t", "ana")})
    assert [o.project for o in owed] == ["garden", "atlas"]
    data = json.loads(owed[0].payload)["data"]
    assert set(data) == {"event_id", "tenant", "principal_hash", "log_position", "occurred_at"}
    assert data["principal_hash"] == principal_hash("t", "ana") and owed[0].principal is None
    assert "ana" not in owed[0].payload.decode()


def test_the_other_bodies_validate_and_a_delivery_id_is_a_name_of_endpoint_and_event() -> None:
    notification_adapter.validate_json(formed_body("t", "garden", 41, 2, WHEN))
    notification_adapter.validate_json(ping_body(uuid.UUID(int=1), "t", "garden", WHEN))
    a, b = uuid.UUID(int=1), uuid.UUID(int=2)
    assert delivery_id(a, b) == delivery_id(a, b) != delivery_id(b, a)
