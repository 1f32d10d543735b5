"""The receipt of an erasure: what deleting a belief or forgetting a principal erased, and where.

An API response model (``GET /v1/erasures/{event_id}``, and ``DELETE`` with ``wait_s``), the
answer of the CLI, the MCP ``delete`` tool and the inspector alike — one shape, so no door can
say less than another. It holds counts, ids and sentences, never a word of what was erased.
"""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Literal

from pydantic import BaseModel, Field

ErasureKind = Literal["belief.deleted", "principal.forgotten"]

LogState = Literal["sealed", "in_clear", "partly_in_clear", "unknown", "not_in_log"]
"""How the erased words lie in the episodic log now: ``sealed`` (under the principal's data key;
after a forgetting, with the key destroyed, unreadable from now on), ``in_clear`` (readable by
whoever reads the topic, until its retention removes them), ``partly_in_clear`` (some of each),
``unknown`` (read before Engram recorded how: treat as in clear), ``not_in_log`` (no episode of
the log held them)."""


class ErasedRows(BaseModel):
    """Rows one table lost (or had their words taken out of)."""

    table: str = Field(description="The PostgreSQL table (per policy generation, or shared).")
    what: str = Field(description="What its rows are, in words.")
    rows: int = Field(ge=0)


class DataKeyFate(BaseModel):
    destroyed: bool = Field(description="Whether this erasure destroyed the principal's data key.")
    key_id: str | None = Field(
        default=None,
        description="Always null since migration 0044: beside the principal's hash, the key id "
        "(named in clear in every sealed token) would link them to their records on the log.",
    )


class LogFate(BaseModel):
    """Where the words stay in Kafka, and for how long."""

    state: LogState
    topic: str = Field(description="The episodic log the episodes were appended to.")
    episodes_sealed: int = Field(ge=0)
    episodes_in_clear: int = Field(ge=0)
    episodes_unknown: int = Field(ge=0)
    retention: str = Field(
        description="How long the topic keeps what it holds ('forever' for the episodic log, "
        "as Engram creates it), as the broker reports it."
    )
    says: str = Field(description="The log's part of the receipt, in words.")


class ErasureReceipt(BaseModel):
    """What a ``belief.deleted`` or ``principal.forgotten`` event erased, once applied."""

    event_id: uuid.UUID = Field(
        description="What the receipt is asked for by: a deletion's event id; a forgetting's "
        "receipt id, which is not its record's id on the log (that record names the "
        'principal\'s pseudonym: docs/privacy.md, "Who a record is about").'
    )
    kind: ErasureKind
    tenant: str
    principal: str
    belief_id: uuid.UUID | None = None
    requested_at: datetime = Field(
        description="When the erasure was asked for; a forgetting's, the day only (midnight UTC)."
    )
    applied_at: datetime
    already: bool = Field(
        description="Nothing was left to erase: the belief was deleted, or the principal "
        "forgotten, by an earlier request."
    )
    erased: list[ErasedRows] = Field(description="Rows deleted or scrubbed, per table.")
    data_key: DataKeyFate
    log: LogFate
    kept: list[str] = Field(description="What stays by design, and why (no words).")
    says: list[str] = Field(description="The receipt in sentences, the headline first.")
