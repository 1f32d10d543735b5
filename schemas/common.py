"""Shared field types of the event contract."""

from __future__ import annotations

from enum import StrEnum
from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field, StringConstraints

IDENTIFIER_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9._:@-]*$"
Identifier = Annotated[
    str,
    StringConstraints(min_length=1, max_length=200, pattern=IDENTIFIER_PATTERN),
]
"""Tenant, principal, project and session names: printable, no slash (the key separator)."""


class Role(StrEnum):
    """Who wrote a message. Only ``user`` can speak for the principal."""

    USER = "user"
    ASSISTANT = "assistant"
    TOOL = "tool"
    SYSTEM = "system"


class Trust(StrEnum):
    """Origin trust of a message: the authority a belief derived from it may carry."""

    OWNER = "owner"
    AFFIRMED = "affirmed"
    UNTRUSTED = "untrusted"


class Polarity(StrEnum):
    ASSERT = "assert"
    RETRACT = "retract"


class ContractModel(BaseModel):
    """Base of every wire model: unknown fields are an error, values are immutable."""

    model_config = ConfigDict(extra="forbid", frozen=True)


def episode_key(tenant: str, project: str) -> bytes:
    """Kafka key of ``engram.episodes``: one project's episodes stay in one partition, in order."""
    return f"{tenant}/{project}".encode()


def principal_key(tenant: str, principal: str) -> bytes:
    """Kafka key of ``engram.claims``: one principal is resolved by one projector at a time."""
    return f"{tenant}/{principal}".encode()


NonNegative = Annotated[int, Field(ge=0)]
