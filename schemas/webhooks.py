"""What a webhook endpoint receives: the body of each signed notification (docs/notifications.md).

Thin by contract: ids, offsets and times, never a statement, a quote or a message. The receiver
reads what it may with its own token. The envelope is the one Standard Webhooks suggests
(``type``, ``timestamp``, ``data``); ``data.event_id`` is the event's own id, the same for
every endpoint, while the ``webhook-id`` header names the delivery to one endpoint.
"""

from __future__ import annotations

from typing import Annotated, Literal
from uuid import UUID

from pydantic import AwareDatetime, Field, TypeAdapter

from engram.schemas.common import ContractModel, Identifier
from engram.schemas.memory_events import MemoryEventType

FORMED_THROUGH = "project.formed_through"
FORGOTTEN = "principal.forgotten"
TEST = "webhook.test"

NotificationType = Literal[MemoryEventType, "principal.forgotten", "project.formed_through"]
"""What an endpoint may subscribe to (every one, unless it names some)."""


class MemoryEventPosition(ContractModel):
    """Where the event is on the memory-events topic."""

    topic: str
    partition: int = Field(ge=0)
    offset: int = Field(ge=0)


class MemoryNotice(ContractModel):
    event_id: UUID
    tenant: Identifier
    principal: Identifier
    project: Identifier
    belief_id: UUID
    log_position: MemoryEventPosition
    occurred_at: AwareDatetime


class MemoryNotification(ContractModel):
    """A belief of a principal changed in the endpoint's project (its kind is ``type``)."""

    type: MemoryEventType
    timestamp: AwareDatetime
    data: MemoryNotice


class ForgottenNotice(ContractModel):
    event_id: UUID
    tenant: Identifier
    principal_hash: str = Field(
        pattern="^[0-9a-f]{64}$",
        description="SHA-256 (hex) of `tenant/principal`, what the principal tombstone keeps: "
        "the forgotten are not named again. Compute it for your principals to find whose "
        "copies to erase.",
    )
    log_position: MemoryEventPosition
    occurred_at: AwareDatetime


class ForgottenNotification(ContractModel):
    """A principal of the endpoint's tenant was forgotten: Engram holds nothing of theirs now;
    erase your copies of the principal whose ``sha256(f"{tenant}/{principal}")`` (hex) is
    ``principal_hash``."""

    type: Literal["principal.forgotten"] = "principal.forgotten"
    timestamp: AwareDatetime
    data: ForgottenNotice


class FormedThroughNotice(ContractModel):
    event_id: UUID
    tenant: Identifier
    project: Identifier
    formed_offset: int = Field(
        ge=0,
        description="Every episode of the project at or below this offset of the episodic log "
        "is formed or parked: a read now reflects them.",
    )
    parked: int = Field(ge=0, description="The project's episodes parked (not formed).")


class FormedThroughNotification(ContractModel):
    """The project's formed watermark moved."""

    type: Literal["project.formed_through"] = "project.formed_through"
    timestamp: AwareDatetime
    data: FormedThroughNotice


class PingNotice(ContractModel):
    endpoint_id: UUID
    tenant: Identifier
    project: Identifier


class PingNotification(ContractModel):
    """Sent by ``engram webhooks test``: proves the endpoint verifies Engram's signature."""

    type: Literal["webhook.test"] = "webhook.test"
    timestamp: AwareDatetime
    data: PingNotice


Notification = Annotated[
    MemoryNotification | ForgottenNotification | FormedThroughNotification | PingNotification,
    Field(discriminator="type"),
]
AnyNotification = (
    MemoryNotification | ForgottenNotification | FormedThroughNotification | PingNotification
)
notification_adapter: TypeAdapter[AnyNotification] = TypeAdapter(Notification)  # type: ignore[arg-type, unused-ignore]
