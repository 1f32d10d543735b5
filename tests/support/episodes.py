"""Building episodes for tests, deterministically."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta

from engram.schemas.episodes import Message, TurnAppended

EPOCH = datetime(2026, 1, 1, tzinfo=UTC)


def turn(
    tenant: str,
    principal: str,
    project: str,
    *contents: str,
    seq: int = 0,
    session: str = "s1",
    roles: tuple[str, ...] = (),
) -> TurnAppended:
    """A turn whose id and time follow from its arguments, so a test reruns identically."""
    event_id = uuid.uuid5(uuid.NAMESPACE_URL, f"{tenant}/{principal}/{project}/{session}/{seq}")
    messages = [
        Message(ordinal=i, role=roles[i] if i < len(roles) else "user", content=content)
        for i, content in enumerate(contents)
    ]
    return TurnAppended(
        event_id=event_id,
        tenant=tenant,
        principal=principal,
        project=project,
        session=session,
        occurred_at=EPOCH + timedelta(minutes=seq),
        messages=messages,
    )
